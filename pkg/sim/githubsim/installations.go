package githubsim

import (
	"net/http"
	"strings"
)

// Installation is one installation of a registered App on an account (an
// organization or user), as an organization's reaper finds it per
// repository. Repositories limits it to those repositories of the account
// ("selected repositories", names without the owner); empty means all of them.
// Tokens minted for it see only the repositories it covers: any other
// repository answers 404, as GitHub does.
type Installation struct {
	ID           int64
	AppID        int64
	Account      string
	Repositories []string
	// Permissions are the repository and organization permissions the
	// installation was granted (scope → read|write); nil means actions:
	// write and metadata: read.
	Permissions map[string]string
}

// WithInstallation registers an installation of an App added by WithApp.
// An App's own App.InstallationID stays an installation covering every
// repository.
func WithInstallation(inst Installation) Option {
	return func(s *Server) {
		if s.installations == nil {
			s.installations = map[int64]Installation{}
		}
		s.installations[inst.ID] = inst
	}
}

// covers reports whether the installation can see owner/name.
func (inst Installation) covers(owner, name string) bool {
	if !strings.EqualFold(inst.Account, owner) {
		return false
	}
	if len(inst.Repositories) == 0 {
		return true
	}
	for _, r := range inst.Repositories {
		if strings.EqualFold(r, name) {
			return true
		}
	}
	return false
}

// repoScope is what an installation token may see: nil means every repository.
type repoScope func(owner, name string) bool

func (s *Server) installationRoutes() {
	s.handle("GET /repos/{owner}/{repo}/installation", authAppJWT, s.getRepoInstallation)
}

// getRepoInstallation answers GET /repos/{owner}/{repo}/installation for the
// calling App: its installation that covers the repository, else 404.
func (s *Server) getRepoInstallation(c *call) error {
	owner, name := c.r.PathValue("owner"), c.r.PathValue("repo")
	rp, ok := s.repos[repoKey(owner, name)]
	if !ok {
		return notFound("repository %s/%s", owner, name)
	}
	inst, ok := s.installationFor(c.who.AppID, rp.Owner, rp.Name)
	if !ok {
		return notFound("installation of app %d on %s", c.who.AppID, rp.FullName())
	}
	selection := "all"
	if len(inst.Repositories) > 0 {
		selection = "selected"
	}
	c.writeJSON(http.StatusOK, map[string]any{
		"id": inst.ID, "app_id": inst.AppID, "app_slug": c.who.AppSlug,
		"account":              map[string]any{"login": inst.Account, "type": "Organization"},
		"repository_selection": selection,
		"permissions":          inst.permissions(),
	})
	return nil
}

// permissions are the installation's granted permissions, as GitHub lists them.
func (inst Installation) permissions() map[string]string {
	if inst.Permissions == nil {
		return map[string]string{"actions": "write", "metadata": "read"}
	}
	return inst.Permissions
}

// installationFor finds the App's installation covering owner/name, in id
// order so the answer is deterministic.
func (s *Server) installationFor(appID int64, owner, name string) (Installation, bool) {
	var found Installation
	ok := false
	for _, inst := range s.installations {
		if inst.AppID == appID && inst.covers(owner, name) && (!ok || inst.ID < found.ID) {
			found, ok = inst, true
		}
	}
	return found, ok
}

// installationScope returns the repository scope of a token minted for the
// App's installation id, and whether the App has that installation. The
// App's own InstallationID sees everything.
func (s *Server) installationScope(app App, id int64) (repoScope, bool) {
	if app.InstallationID == id && id != 0 {
		return nil, true
	}
	inst, ok := s.installations[id]
	if !ok || inst.AppID != app.ID {
		return nil, false
	}
	return inst.covers, true
}

// inScope refuses, as GitHub's 404, a repository the caller's installation
// token does not cover.
func (c *call) inScope(rp *repo) error {
	if c.scope != nil && !c.scope(rp.Owner, rp.Name) {
		return notFound("repository %s is not covered by this installation", rp.FullName())
	}
	return nil
}
