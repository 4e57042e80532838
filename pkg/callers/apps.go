package callers

// The GitHub App permissions the lane's jobs use (.github/docs/setup.md, "The
// GitHub App"), as installation permissions name them: repository permissions by
// their API names, plus metadata: read, which every App has.
var (
	// OneApp is the union every job of the lane, the reaper and the cost
	// history use, for a single App passed as app-id.
	OneApp = Levels{"actions": "write", "administration": "write", "checks": "write", "contents": "read", "pull_requests": "read", "metadata": "read"}
	// ChecksApp is the gate-publishing App of the two-App split (app-id):
	// authorize and gate (contents: the merge commit's tree and parents).
	ChecksApp = Levels{"checks": "write", "contents": "read", "pull_requests": "read", "metadata": "read"}
	// RunnerApp is the runner-administration App of the split
	// (runner-app-id): provision, watchdog and cleanup, and the reaper and
	// cost history when they are given it.
	RunnerApp = Levels{"actions": "write", "administration": "write", "checks": "read", "pull_requests": "read", "metadata": "read"}
	// OrgRunners is what the App that provisions needs besides, for
	// organization-scope runners (runner-scope: org).
	OrgRunners = Levels{"organization_self_hosted_runners": "write"}
)

// Missing returns the scopes of want that have does not cover, with the
// level wanted.
func Missing(have, want Levels) Levels {
	out := Levels{}
	for scope, level := range want {
		if !Covers(have[scope], level) {
			out[scope] = level
		}
	}
	return out
}
