package runpod

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// FuzzVolumeBillingRecord: any record either is refused or is one the
// query could have answered: the volume asked for, a bucket inside the
// window and finite amounts of 0 or more; never a panic.
func FuzzVolumeBillingRecord(f *testing.F) {
	f.Add(`{"startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z","networkVolumeId":"2q9m7x4c","totalAmount":5.79,"standardAmount":0,"highPerformanceAmount":5.79}`, "2q9m7x4c")
	f.Add(`{"startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z","networkVolumeId":"other","totalAmount":1}`, "2q9m7x4c")
	f.Add(`{"startTime":"2026-05-01T00:00:00Z","endTime":"2026-05-02T00:00:00Z","networkVolumeId":"v","totalAmount":-1}`, "")
	f.Add(`{"networkVolumeId":"v","totalAmount":1e309}`, "")
	f.Fuzz(func(t *testing.T, body, id string) {
		var w volumeBillingWire
		if json.Unmarshal([]byte(body), &w) != nil {
			return
		}
		q := BillingQuery{Start: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 6, 8, 0, 0, 0, 0, time.UTC), ID: id}
		r, err := w.record(q)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an empty refusal")
			}
			return
		}
		switch {
		case r.ID == "" || (id != "" && r.ID != id):
			t.Fatalf("record of %q answers a query for %q", r.ID, id)
		case !r.End.After(r.Start) || !r.Start.Before(q.End) || !r.End.After(q.Start):
			t.Fatalf("bucket %s..%s outside the window", r.Start, r.End)
		}
		for _, v := range []float64{r.Total, r.Standard, r.HighPerformance} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("amount %v accepted", v)
			}
		}
	})
}
