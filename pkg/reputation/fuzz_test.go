package reputation_test

import (
	"testing"

	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
)

// FuzzParseRecord: a reputation record is downloaded from an artifact, so
// any bytes may arrive. Parse never panics; what it accepts round-trips, and
// estimating, ranking and screening machines with it never panic either.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"version":1,"observations":[]}`))
	f.Add([]byte(`{"version":1,"observations":[{"at":"2026-03-01T00:00:00Z","gpu":"NVIDIA RTX A5000","dataCenter":"EU-RO-1","machine":"m1","ok":false,"seconds":30}]}`))
	f.Add([]byte(`{"version":1,"observations":[{"at":"2026-03-01T00:00:00Z","gpu":"g","dataCenter":"X","cloud":"community","ok":true,"seconds":1,"pricePerHour":0.2}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := reputation.Parse(data)
		if err != nil {
			return
		}
		b, err := rec.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, err := reputation.Parse(b); err != nil {
			t.Fatalf("a parsed record does not parse again: %v\n%s", err, b)
		}
		e := reputation.New(rec, now, reputation.DefaultParams)
		for _, o := range rec.Observations {
			e.BadMachine(o.Machine)
			e.Estimate(reputation.Pair{GPU: o.GPU, Cloud: o.Cloud, DataCenter: o.DataCenter})
		}
		in := input()
		in.Rank = e.Rank
		plan.Build(in)
	})
}
