package market

import (
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// result is a policy's result with wasted dollars over 100 accepted pods,
// one p95 time to a runner and runs with no pod.
func result(policy string, wasted float64, p95 time.Duration, noPod int) Result {
	times := make([]time.Duration, 20)
	for i := range times {
		times[i] = time.Minute
	}
	times[18], times[19] = p95, p95
	return Result{Policy: policy, Accepted: 100, Wasted: wasted, TimesToRunner: times, RunsNoPod: noPod}
}

// The target holds each reputation result to the seed's: ≥ 30 % less waste,
// no higher p95, no more runs with no pod; the table marks each miss and
// counts the scenarios that meet all three, per cloud set.
func TestSweepTableJudgesTheTarget(t *testing.T) {
	seed := result("seed", 0.40, 10*time.Minute, 50)
	coldSeed := result("seed", 0.40, 12*time.Minute, 50)
	cs := []Comparison{
		{Title: "meets all", Seed: seed, Lane: result("lane", 0.10, 9*time.Minute, 5),
			Reputation: result("reputation", 0.28, 10*time.Minute, 50), Secure: result("secure", 0.20, 9*time.Minute, 10),
			ColdSeed: coldSeed, ColdReputation: result("reputation", 0.30, 12*time.Minute, 20)},
		{Title: "misses", Seed: seed, Lane: result("lane", 0.10, 9*time.Minute, 5),
			Reputation: result("reputation", 0.29, 11*time.Minute, 51), Secure: result("secure", 0.60, 9*time.Minute, 10),
			ColdSeed: coldSeed, ColdReputation: result("reputation", 0.30, 12*time.Minute+time.Second, 20)},
	}
	assert.Check(t, Judge(seed, cs[0].Reputation).All, "exactly 30 % less, the same p95 and no-pod runs meet it")
	v := Judge(seed, cs[1].Reputation)
	assert.Check(t, !v.WasteOK && !v.P95OK && !v.NoPodOK)
	assert.Check(t, cs[0].ColdP95OK(), "the same p95 from a cold start is not higher")
	assert.Check(t, !cs[1].ColdP95OK(), "a second more from a cold start is higher")

	table := SweepTable(cs)
	rows := strings.Split(table, "\n")
	assert.Check(t, is.Contains(rows[2], "| meets all | $0.0040 | $0.0010 | $0.0028 | 30 % | $0.0020 | 50 % | 10m00s / 10m00s / 9m00s | 50 / 50 / 10 | 12m00s / 12m00s |"), rows[2])
	assert.Check(t, is.Contains(rows[3], "| misses | $0.0040 | $0.0010 | $0.0029 | 28 % ✗ | $0.0060 | 50 % more ✗ | 10m00s / 11m00s ✗ / 9m00s | 50 / 51 ✗ / 10 | 12m00s / 12m01s ✗ |"), rows[3])
	assert.Check(t, is.Contains(table, "Both clouds: ≥ 30 % less waste in 1 of 2 scenarios, p95 not higher in 1, runs with no pod not more in 1; all three in 1."))
	assert.Check(t, is.Contains(table, "Secure cloud only: ≥ 30 % less waste in 1 of 2 scenarios, p95 not higher in 2, runs with no pod not more in 2; all three in 1."))
	assert.Check(t, is.Contains(table, "From a cold start (no warm-up: no record for the first day and a quarter), both clouds: p95 not higher in 1 of 2 scenarios."))
}
