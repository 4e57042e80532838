package reap

import (
	"fmt"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/mdtable"
)

// JSON renders the organization record, indented, with a final newline.
func (r *OrgRecord) JSON() ([]byte, error) { return encodeRecord(r) }

// WriteFile writes the organization record's JSON to path.
func (r *OrgRecord) WriteFile(path string) error { return writeRecord(path, r) }

// count returns how many repositories ended with status st.
func (r *OrgRecord) count(st RepoStatus) int {
	return countOf(r.Repositories, func(rr RepoRecord) bool { return rr.Status == st })
}

// Markdown renders the organization record for the job summary: one row per
// repository, then the pods that were reclaimed or could not be settled.
func (r *OrgRecord) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### RunPod organization reaper: %s (%s)\n\n", mdtable.Cell(r.Organization), sweepMode(r.Execute))
	fmt.Fprintf(&b, "Checked at %s: %s — %d swept, %d skipped, %d failed, %d deferred; %d pod(s) outside the organization or not the suite's (never touched).\n\n",
		r.CheckedAt.UTC().Format(time.RFC3339), repositories(len(r.Repositories)), r.count(RepoSwept), r.count(RepoSkipped),
		r.count(RepoFailed), r.count(RepoDeferred), len(r.Outside))
	if r.Error != "" {
		fmt.Fprintf(&b, "**Sweep failed, nothing was decided:** %s\n\n", mdtable.Cell(r.Error))
	}
	if n := r.count(RepoFailed); n > 0 {
		fmt.Fprintf(&b, "**%s failed:** their unsettled pods were left as they were (see the table); the other repositories were swept, and the next sweep retries.\n\n", repositories(n))
	}
	if n := r.count(RepoDeferred); n > 0 {
		fmt.Fprintf(&b, "**%s deferred** to keep the rate-limit reserve for the lanes sharing the key; the next sweep decides them.\n\n", repositories(n))
	}
	if len(r.Repositories) > 0 {
		t := mdtable.New("Repository", "Status", "Pods seen", "Reclaimed", "Kept", "Skipped", "Deferred", "Errors", "Reason")
		for _, rr := range r.Repositories {
			c := rr.Counts()
			status := string(rr.Status)
			if rr.Status == RepoFailed {
				status = "**failed**"
			}
			t.Row(mdtable.Cell(rr.Repository), status, fmt.Sprint(c.Seen), fmt.Sprint(c.Reclaimed), fmt.Sprint(c.Kept),
				fmt.Sprint(c.Skipped), fmt.Sprint(c.Deferred), fmt.Sprint(c.Errors), mdtable.Cell(rr.Reason))
		}
		b.WriteString(t.String())
	}
	b.WriteString(r.podsMarkdown())
	return b.String()
}

// podsMarkdown lists the reclaimed pods and those that failed, capped; the
// record has every pod.
func (r *OrgRecord) podsMarkdown() string {
	t := mdtable.New("Repository", "Pod", "Run", "Attempt", "Decision", "Reason", "Deleted at", "Estimated cost")
	rows, more, reclaimed := 0, 0, false
	for _, rr := range r.Repositories {
		for _, p := range rr.Pods {
			if p.Decision != DecisionReclaim && !p.Failed() {
				continue
			}
			reclaimed = reclaimed || p.Decision == DecisionReclaim
			if rows == maxSummaryRows {
				more++
				continue
			}
			rows++
			t.Row(append([]string{mdtable.Cell(rr.Repository), mdtable.Cell(p.PodID)}, p.decisionCells()...)...)
		}
	}
	if rows == 0 {
		return ""
	}
	out := "\nReclaimed and unsettled pods:\n\n" + t.String()
	if more > 0 {
		out += fmt.Sprintf("\n%d more pod(s) are in the decision record.\n", more)
	}
	if reclaimed && r.Execute {
		out += "\n> " + cost.Disclaimer + "\n"
	}
	return out
}

// repositories counts repositories in words: "1 repository", "3 repositories".
func repositories(n int) string {
	if n == 1 {
		return "1 repository"
	}
	return fmt.Sprintf("%d repositories", n)
}
