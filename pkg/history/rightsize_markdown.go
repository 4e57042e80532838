package history

import (
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
)

// writeRightSizing renders the recorded GPU usage per tier and the advice.
func (r *Report) writeRightSizing(b *strings.Builder) {
	rs := r.RightSizing
	if rs == nil {
		return
	}
	b.WriteString("### Right-sizing from recorded GPU usage\n\n")
	fmt.Fprintf(b, "What the GPU jobs recorded of their GPU (nvidia-smi samples, artifact `%s<run>-<attempt>`), per tier of the accepted pods, "+
		"and the smallest reviewed tier whose memory holds the peak with %.0f %% to spare. The samples come from the job that runs the "+
		"pull request's code: they inform this advice and change no cost.\n\n", UsageArtifactPrefix, (rs.Headroom-1)*100)
	tb := mdtable.New("Tier", "GPU", "Runs", "Peak memory", "Utilisation (peak / mean)", "$/h", "Smallest tier that fits", "Cheaper tier that fits").AlignRight(2, 3, 4, 5)
	for _, t := range rs.Tiers {
		cheaper := "-"
		if t.Cheaper != "" {
			cheaper = fmt.Sprintf("%s (%s)", mdtable.Code(t.Cheaper), t.CheaperPerHour.Format(money.Cents))
		}
		tb.Row(mdtable.Code(t.Tier), cell(strings.Join(t.GPUs, ", ")), fmt.Sprint(t.Runs), fmt.Sprintf("%.1f of %.1f GiB", t.PeakMemoryGiB, t.MemoryGiB),
			fmt.Sprintf("%d %% / %.1f %%", t.PeakUtilPct, t.MeanUtilPct), strings.TrimPrefix(t.PricePerHour.Hourly().Format(money.Cents), "$"), codeOrDash(t.SmallestFit), cheaper)
	}
	b.WriteString(tb.String() + "\n")
	for _, t := range rs.Tiers {
		fmt.Fprintf(b, "- %s: %s\n", mdtable.Code(t.Tier), cell(t.Advice))
	}
	b.WriteString("\n")
	for _, n := range rs.Notes {
		b.WriteString("> " + cell(n) + "\n")
	}
	if len(rs.Notes) > 0 {
		b.WriteString("\n")
	}
}

func codeOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return mdtable.Code(s)
}
