package cleanup

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lanetiers"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/redact"
)

// DefaultArtifactDir is where, under the workspace, the cost artifact file is
// written for a later upload-artifact step.
const DefaultArtifactDir = "runpod-gpu-cost"

// Outputs are the cleanup-runpod action's outputs, one field per output
// (written by actionio.WriteOutputs).
type Outputs struct {
	DeletedPodIDs    string `output:"deleted-pod-ids"`
	RemainingPodIDs  string `output:"remaining-pod-ids"`
	KeptPodIDs       string `output:"kept-pod-ids"`
	PaidSeconds      string `output:"paid-seconds"`
	CostUSD          string `output:"cost-usd"`
	CostArtifactName string `output:"cost-artifact-name"`
	// TierResults are the gate's rows (lanetiers.Result), one-line JSON.
	TierResults string `output:"tier-results"`
	// CostArtifactPath is set by the action once the artifact file is written.
	CostArtifactPath string `output:"cost-artifact-path,omitempty"`
}

// Outputs are the action outputs of a cleanup: what was deleted, what may
// still bill, and the accepted pod's paid seconds and dollars ("unknown" when
// the evidence does not show them).
func (r Result) Outputs() Outputs {
	rows := r.Rows
	if rows == nil {
		rows = []lanetiers.Result{}
	}
	out := Outputs{
		DeletedPodIDs:    strings.Join(r.Deleted(), ","),
		RemainingPodIDs:  strings.Join(r.Remaining(), ","),
		KeptPodIDs:       strings.Join(r.Kept, ","),
		PaidSeconds:      r.Report.Window.Seconds().String(),
		CostUSD:          dollars(r.Report.Dollars()),
		CostArtifactName: cost.ArtifactName(r.Run.ID, r.Run.Attempt),
		TierResults:      lanetiers.Format(rows),
	}
	if len(r.More) > 0 { // every pod of the lane, summed; unknown when one is
		seconds, usd, known := int64(0), money.Amount(0), true
		for _, rep := range r.Reports() {
			s, d := rep.Window.Seconds(), rep.Dollars()
			if rep.PodID == "" {
				continue
			}
			known = known && s.Known && d.Known
			seconds, usd = seconds+s.N, usd+d.USD
		}
		out.PaidSeconds, out.CostUSD = cost.KnownSeconds(seconds).String(), dollars(cost.KnownMoney(usd))
		if !known {
			out.PaidSeconds, out.CostUSD = "unknown", "unknown"
		}
	}
	return out
}

func dollars(m cost.Money) string {
	if !m.Known {
		return "unknown"
	}
	return strings.TrimPrefix(m.USD.Format(money.Fine), "$")
}

// Summary renders the job summary: every pod's fate, the pods that may still
// bill (named first, so nobody misses them), and the cost report.
func (r Result) Summary(runErr error) string {
	var b strings.Builder
	b.WriteString("## RunPod GPU cleanup\n\n")
	if remaining := r.Remaining(); len(remaining) > 0 {
		fmt.Fprintf(&b, "> [!CAUTION]\n> **Deletion unconfirmed — these pods may still be billing:** %s\n>\n"+
			"> Delete them in the RunPod console; the scheduled reaper retries too.\n\n", code(remaining))
	}
	if len(r.Deletions) == 0 {
		b.WriteString("No pod of this run attempt needed deleting.\n\n")
	} else {
		tb := mdtable.New("Pod", "Found by", "Outcome")
		for _, d := range r.Deletions {
			found := "pod-id input"
			if !d.Tracked {
				found = "run attempt tags (never published)"
			}
			tb.Row(mdtable.Code(d.PodID), found, outcome(d))
		}
		b.WriteString(tb.String() + "\n")
	}
	if len(r.Kept) > 0 {
		fmt.Fprintf(&b, "**Kept for inspection (keep-failed-pods, still billing):** %s\n\n", code(r.Kept))
		if len(r.KeptForSSH) > 0 {
			b.WriteString(keptSummary(r.KeptForSSH) + "\n")
		}
	}
	if runErr != nil {
		fmt.Fprintf(&b, "**Cleanup failed:** %s\n\n", oneLine(runErr.Error()))
	}
	for i, rep := range r.Reports() {
		if len(r.More) > 0 {
			fmt.Fprintf(&b, "\n### Pod %d of %d: %s\n\n", i+1, len(r.Reports()), cmp.Or(rep.PodID, "(none)"))
		}
		b.WriteString(rep.Markdown())
	}
	return b.String()
}

func outcome(d Deletion) string {
	switch {
	case !d.Confirmed():
		return "**unconfirmed** — " + mdtable.Cell(d.Err.Error())
	case d.AlreadyGone:
		return "already gone"
	default:
		return "deleted"
	}
}

func code(ids []string) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = mdtable.Code(id)
	}
	return strings.Join(quoted, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// WriteArtifact writes the cost artifact file into dir (created if needed) and
// returns its path, for an upload-artifact step named by cost.ArtifactName.
func WriteArtifact(dir string, a cost.Artifact) (string, error) {
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return "", fmt.Errorf("cost artifact: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cost artifact: %w", err)
	}
	path := filepath.Join(dir, cost.ArtifactFileName)
	// Published as an artifact: no key in a note or a reason leaves in it.
	if err := os.WriteFile(path, append([]byte(redact.Published(string(data))), '\n'), 0o644); err != nil {
		return "", fmt.Errorf("cost artifact: %w", err)
	}
	return path, nil
}
