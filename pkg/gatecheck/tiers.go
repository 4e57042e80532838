package gatecheck

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
)

// TierRow is one row of a gate over several pods: a tier of a matrix lane
// (or the one pod of a lane on any tier), a pod lost to its host, its
// re-run, or a tier that had no pod.
type TierRow struct {
	Tier       string // "" in a lane of one pod
	GPU        string
	DataCenter string
	// PricePerHour and PaidSeconds are nil when unknown (or no pod ran).
	PricePerHour *money.Rate
	PaidSeconds  *int64
	// Result is the row's outcome (passed, failed, host-fault, reused, …)
	// and Reason says why in words.
	Result string
	Reason string
}

// writeTiers writes the rows as a table: tier, GPU, data center, price,
// paid seconds and result.
func writeTiers(b *strings.Builder, rows []TierRow) {
	tb := mdtable.New("tier", "GPU", "data center", "$/h", "paid s", "result").AlignRight(3, 4)
	for _, r := range rows {
		price, paid := "—", "—"
		if r.PricePerHour != nil {
			price = perHourCell(*r.PricePerHour)
		}
		if r.PaidSeconds != nil {
			paid = fmt.Sprint(*r.PaidSeconds)
		}
		result := r.Result
		if r.Reason != "" {
			result += ": " + r.Reason
		}
		tb.Row(mdtable.Cell(cmp.Or(r.Tier, "any")), mdtable.Cell(cmp.Or(r.GPU, "—")), mdtable.Cell(cmp.Or(r.DataCenter, "—")),
			price, paid, mdtable.Cell(result))
	}
	b.WriteString(tb.String())
}

// tierTitle is a paid gate's title over several rows: the GPUs that passed.
func tierTitle(rows []TierRow) string {
	var gpus []string
	for _, r := range rows {
		if r.Result == "passed" && r.GPU != "" {
			name := r.GPU
			if r.Tier != "" {
				name = r.Tier + " (" + r.GPU + ")"
			}
			gpus = append(gpus, name)
		}
	}
	if len(gpus) == 0 {
		return "GPU tests passed"
	}
	return "GPU tests passed on " + strings.Join(gpus, ", ")
}

// perHourCell is an hourly price in a "$/h" column: "0.49".
func perHourCell(r money.Rate) string { return strings.TrimPrefix(r.Hourly().Format(money.Cents), "$") }
