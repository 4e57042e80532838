package budget

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/org/runpod-gpu/pkg/spend"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// A record dated after now, while billing cannot be read, is refused: it
// would otherwise count as "$0 today" and let a create through.
func TestCheckRefusesASpendRecordFromTheFuture(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Record)
		wantErr string
	}{
		{name: "written tomorrow", mutate: func(r *Record) { r.WrittenAt = now.Add(24 * time.Hour) },
			wantErr: "the spend record's writtenAt 2026-10-15T15:00:00Z is after now (2026-10-14T15:00:00Z)"},
		{name: "covers next year", mutate: func(r *Record) { r.Since, r.Until = "2027-01-01", "2027-01-02" },
			wantErr: "the spend record's until 2027-01-02 is after now"},
		{name: "a day after today", mutate: func(r *Record) { r.Days = append(r.Days, DaySpend{Day: "2026-10-15", USD: usd(0)}) },
			wantErr: "the spend record's day 2026-10-15 is after now"},
		{name: "another runner's clock a minute ahead", mutate: func(r *Record) { r.WrittenAt = now.Add(time.Minute) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &Record{Version: RecordVersion, WrittenAt: now.Add(-time.Hour), Since: "2026-10-01", Until: "2026-10-14",
				Days: []DaySpend{{Day: "2026-10-14", USD: usd(0.10), Billed: true}}}
			tc.mutate(rec)
			g := guard(&fakeRunPod{billingErr: errors.New("read pod billing: 403 Forbidden")}, spend.Limits{DailyUSD: usd(5)})
			g.Record = rec
			_, err := g.Check(context.Background(), spend.Create{Lane: spend.LanePod, What: "c", WorstCaseUSD: usd(0.01)})
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
			assert.Check(t, is.ErrorContains(err, "RunPod billing unreadable (read pod billing: 403 Forbidden)"))
			assert.Check(t, is.ErrorContains(err, "no create was made"))
			var fe *FutureError
			assert.Check(t, errors.As(err, &fe))
		})
	}
}
