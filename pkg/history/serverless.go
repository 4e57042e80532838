package history

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
)

// ServerlessSummary is the Serverless lane's part of the report: its own rows
// and totals (the attempts' worker time at the lane's price ceiling, unknown
// for a job whose timing no answer gave), counted in the report's totals too.
type ServerlessSummary struct {
	Attempts      int                `json:"attempts"`
	Jobs          int                `json:"jobs"` // attempts that submitted their one job
	Spend         Amount             `json:"spend"`
	ReservedCents money.WholeCents   `json:"reservedCents"` // the ledger's reservations for these attempts
	Rows          []ServerlessRow    `json:"rows"`
	Weeks         []ServerlessWeekly `json:"weeks"`
}

// ServerlessRow is one Serverless attempt.
type ServerlessRow struct {
	RunID   int64                `json:"runId"`
	Attempt int                  `json:"runAttempt"`
	Day     string               `json:"day"`
	URL     string               `json:"url"`
	Spend   cost.ServerlessSpend `json:"serverless"`
}

// ServerlessWeekly is one ISO week's Serverless spend.
type ServerlessWeekly struct {
	Week  string `json:"week"`
	Jobs  int    `json:"jobs"`
	Spend Amount `json:"spend"`
}

// serverlessOf is the Serverless spend an attempt's cost artifacts carry, if any.
func serverlessOf(artifacts []cost.Artifact) *cost.ServerlessSpend {
	for _, a := range artifacts {
		if a.Serverless != nil {
			s := *a.Serverless
			return &s
		}
	}
	return nil
}

// byServerless fills the Serverless summary and adds its spend to the totals.
func (r *Report) byServerless() {
	s := &ServerlessSummary{Rows: []ServerlessRow{}, Weeks: []ServerlessWeekly{}}
	weeks := groupInto(&s.Weeks)
	for _, a := range r.Attempts {
		if a.Serverless == nil {
			continue
		}
		sp := *a.Serverless
		s.Attempts++
		if sp.JobID != "" {
			s.Jobs++
		}
		s.Spend.AddJob(sp.Dollars)
		s.ReservedCents += sp.ReservedCents
		s.Rows = append(s.Rows, ServerlessRow{RunID: a.RunID, Attempt: a.Attempt, Day: a.when().UTC().Format(time.DateOnly), URL: a.URL, Spend: sp})
		week := isoWeek(a.when())
		w := weeks.row(week, func() ServerlessWeekly { return ServerlessWeekly{Week: week} })
		w.Jobs += min(len(sp.JobID), 1)
		w.Spend.AddJob(sp.Dollars)
	}
	if s.Attempts == 0 {
		return
	}
	slices.SortFunc(s.Weeks, func(a, b ServerlessWeekly) int { return cmp.Compare(a.Week, b.Week) })
	r.Serverless = s
	r.Totals.ServerlessAttempts = s.Attempts
	r.Totals.Spend.Plus(s.Spend)
}

// writeServerless renders the Serverless section: a row per attempt and a
// chart of its spend per week.
func (r *Report) writeServerless(b *strings.Builder) {
	s := r.Serverless
	if s == nil {
		return
	}
	b.WriteString("### Serverless lane\n\n")
	b.WriteString("Attempts of the `serverless` lane (serverless-lane.yml): one Serverless job each instead of a pod.\n\n")
	fmt.Fprintf(b, "%d attempts, %d jobs: **%s** estimated (worker time at the lane's price ceiling), %s reserved in the budget ledger.\n\n",
		s.Attempts, s.Jobs, s.Spend, s.ReservedCents.Amount())
	tb := mdtable.New("Run", "Day", "Job", "Status", "GPU", "Worker seconds", "Spend", "Reserved").AlignRight(5, 6, 7)
	for _, row := range s.Rows {
		sp := row.Spend
		tb.Row(attemptLink(row.RunID, row.Attempt, row.URL), row.Day, mdtable.Code(cmp.Or(sp.JobID, "none")), cell(cmp.Or(sp.JobStatus, "-")),
			cell(sp.GPU), fmt.Sprint(sp.WorkerSeconds), sp.Dollars.String(), sp.ReservedCents.Amount().String())
	}
	b.WriteString(tb.String() + "\n")
	labels, values := make([]string, 0, len(s.Weeks)), make([]money.Amount, 0, len(s.Weeks))
	unknown := 0
	for _, w := range s.Weeks {
		labels, values = append(labels, w.Week), append(values, w.Spend.Known)
		unknown += w.Spend.Unknown
	}
	writeChart(b, "Known Serverless spend per week (USD)", labels, values, unknown)
}
