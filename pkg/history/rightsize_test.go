package history

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/wire"
)

// addUsage saves a GPU usage artifact for a saved attempt, as a collection
// that downloaded it would.
func addUsage(t *testing.T, dir string, k AttemptKey, samples string) {
	t.Helper()
	addUsageNamed(t, dir, k, UsageArtifactName(k.RunID, k.Attempt), samples)
}

// addUsageNamed saves a GPU usage artifact of the given name.
func addUsageNamed(t *testing.T, dir string, k AttemptKey, name, samples string) {
	t.Helper()
	st := store{dir: dir}
	rec, ok, err := st.load(k)
	assert.NilError(t, err)
	assert.Assert(t, ok)
	f := ArtifactFile{ID: 900000 + k.RunID*10 + int64(len(rec.Artifacts)), Name: name, Download: Download{State: StateComplete}}
	assert.NilError(t, st.writeFile(k, f.fileName(), zipOf(t, map[string]string{UsageFileName: samples})))
	rec.Artifacts = append(rec.Artifacts, f)
	assert.NilError(t, st.save(rec))
}

// peakSamples are nvidia-smi samples peaking at peakMiB on a 24 GB card.
func peakSamples(peakMiB int) string {
	return fmt.Sprintf("t, 0, NVIDIA GeForce RTX 4090, 1024, 24564, 20\nt, 0, NVIDIA GeForce RTX 4090, %d, 24564, 80\n", peakMiB)
}

// reviewedTiers are four tiers of the configuration, from 8 GB to 80 GB.
func reviewedTiers() []TierOffer {
	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{
		{Name: "turing8", GPUIDs: []string{"NVIDIA RTX 4000"}},
		{Name: "ampere16", GPUIDs: []string{"NVIDIA RTX A4000", "NVIDIA RTX A4500"}},
		{Name: "ada24", GPUIDs: []string{"NVIDIA GeForce RTX 4090"}},
		{Name: "hopper80", GPUIDs: []string{"NVIDIA H100 80GB HBM3"}},
	}
	gpu := func(id string, gb int, price float64) runpod.GPUType {
		return runpod.GPUType{ID: id, Memory: gb, Price: runpod.GPUPrice{Secure: wire.Float(price)}}
	}
	return TierOffers(cfg, []runpod.GPUType{gpu("NVIDIA RTX 4000", 8, 0.16), gpu("NVIDIA RTX A4000", 16, 0.25), gpu("NVIDIA RTX A4500", 20, 0.34),
		gpu("NVIDIA GeForce RTX 4090", 24, 0.69), gpu("NVIDIA H100 80GB HBM3", 80, 2.99)})
}

func TestTierOffersTakeEachTiersLeastMemoryAndPrice(t *testing.T) {
	offers := reviewedTiers()
	assert.Check(t, is.DeepEqual(offers[1], TierOffer{Name: "ampere16", GPUIDs: []string{"NVIDIA RTX A4000", "NVIDIA RTX A4500"}, MemoryGB: 16, PricePerHour: money.PerHour(0.25)}),
		"a pod may land on either GPU: the smaller memory is the tier's")
	cfg := config.Default()
	cfg.GPUTiers = []config.GPUTier{{Name: "new", GPUIDs: []string{"NVIDIA RTX A4000", "NVIDIA B200"}}}
	assert.Check(t, is.Equal(TierOffers(cfg, []runpod.GPUType{{ID: "NVIDIA RTX A4000", Memory: 16}})[0].MemoryGB, 0),
		"a GPU the catalog does not know leaves the tier's memory unknown")
}

// The case: the tests peaked at 9 GB on a 24 GB tier; the report
// names the smallest reviewed tier that holds them (with 20 % to spare),
// which is also cheaper.
func TestRightSizingNamesTheSmallestReviewedTierThatFits(t *testing.T) {
	dir := t.TempDir()
	var saved []savedAttempt
	for i := range 2 {
		run := int64(1 + i)
		r := acceptedReport(fmt.Sprintf("pod-%d", run), "NVIDIA GeForce RTX 4090", 0.69, t0.Add(time.Duration(i)*time.Hour), 600)
		r.Tier = "ada24"
		saved = append(saved, savedAttempt{rec: completedAttempt(run, 1, "pull_request", t0.Add(time.Duration(i)*time.Hour)), logs: map[string]string{},
			artifacts: []cost.Artifact{artifactOf(run, 1, cost.TriggerAutomatic, strings.Repeat("b", 40), r)}})
	}
	writeSaved(t, dir, saved...)
	addUsage(t, dir, AttemptKey{RunID: 1, Attempt: 1}, peakSamples(9*1024))
	addUsage(t, dir, AttemptKey{RunID: 2, Attempt: 1}, peakSamples(6*1024))

	res, err := Run(context.Background(), Options{Dir: dir, Tiers: reviewedTiers()})
	assert.NilError(t, err)
	rs := res.Report.RightSizing
	assert.Assert(t, rs != nil)
	assert.Assert(t, is.Len(rs.Tiers, 1))
	fit := rs.Tiers[0]
	assert.Check(t, is.Equal(fit.Tier, "ada24"))
	assert.Check(t, is.Equal(fit.Runs, 2))
	assert.Check(t, is.Equal(fit.PeakMemoryGiB, 9.0))
	assert.Check(t, is.Equal(fit.MemoryGiB, 24.0))
	assert.Check(t, is.Equal(fit.SmallestFit, "ampere16"), "9 GiB × 1.2 = 10.8 GiB: 8 GB is too small, 16 GB holds it")
	assert.Check(t, is.Equal(fit.Cheaper, "ampere16"))
	assert.Check(t, is.Equal(fit.Advice, "peak 9.0 GiB of 24.0 GiB, utilisation peak 80 %, mean 50.0 % over 2 run(s); "+
		"the smallest reviewed tier that holds it is ampere16 (16 GB); ampere16 (16 GB at $0.25/h) would have held it for $0.44/h less"))
	md := res.Report.Markdown()
	assert.Check(t, is.Contains(md, "### Right-sizing from recorded GPU usage"))
	assert.Check(t, is.Contains(md, "| `ada24` | NVIDIA GeForce RTX 4090 | 2 | 9.0 of 24.0 GiB | 80 % / 50.0 % | 0.69 | `ampere16` | `ampere16` ($0.25/h) |"))
}

func TestRightSizingSaysWhenNothingSmallerFits(t *testing.T) {
	tiers := reviewedTiers()
	for _, tc := range []struct {
		name       string
		peakMiB    int
		tier       string
		offers     []TierOffer
		wantFit    string
		wantAdvice string
	}{
		{"already the smallest", 15 * 1024, "ada24", tiers, "ada24", "this is already the smallest reviewed tier that holds it"},
		{"none holds it", 70 * 1024, "hopper80", tiers[:3], "", "no reviewed tier of known memory holds 84.0 GiB"},
		{"no configuration", 9 * 1024, "ada24", nil, "", "no reviewed tier of known memory holds 10.8 GiB"},
	} {
		r := summarize([]Attempt{{RunID: 1, Attempt: 1, Decision: DecisionPaid,
			Pods:     []Pod{{ID: "p", Outcome: cost.OutcomeAccepted, Tier: tc.tier, Price: price(0.69), Dollars: cost.KnownMoney(money.FromDollars(0.1))}},
			GPUUsage: &GPUUsage{GPU: "G", Samples: 10, PeakMemoryMiB: tc.peakMiB, TotalMemoryMiB: 81559, PeakUtilPct: 99, MeanUtilPct: 90}}}, nil)
		rs := r.rightSize(tc.offers)
		assert.Assert(t, rs != nil, tc.name)
		assert.Check(t, is.Equal(rs.Tiers[0].SmallestFit, tc.wantFit), tc.name)
		assert.Check(t, is.Contains(rs.Tiers[0].Advice, tc.wantAdvice), tc.name)
		assert.Check(t, is.Equal(rs.Tiers[0].Cheaper, ""), tc.name)
	}
}

// A matrix lane's attempt has a pod and a GPU job per tier, each uploading
// its own usage (PodUsageArtifactName): each tier is weighed by its own
// pod's samples, never by another tier's.
func TestRightSizingWeighsEachPodOfAMatrixLaneByItsOwnUsage(t *testing.T) {
	dir := t.TempDir()
	ada := acceptedReport("pod-ada", "NVIDIA GeForce RTX 4090", 0.69, t0, 600)
	ada.Tier = "ada24"
	hopper := acceptedReport("pod-hopper", "NVIDIA H100 80GB HBM3", 2.99, t0, 600)
	hopper.Tier = "hopper80"
	art := artifactOf(1, 1, cost.TriggerAutomatic, strings.Repeat("b", 40), ada)
	art.More = []cost.Report{hopper}
	writeSaved(t, dir, savedAttempt{rec: completedAttempt(1, 1, "pull_request", t0), logs: map[string]string{}, artifacts: []cost.Artifact{art}})
	k := AttemptKey{RunID: 1, Attempt: 1}
	addUsageNamed(t, dir, k, PodUsageArtifactName(1, 1, "pod-ada"), peakSamples(9*1024))
	addUsageNamed(t, dir, k, PodUsageArtifactName(1, 1, "pod-hopper"), "t, 0, NVIDIA H100 80GB HBM3, 60000, 81559, 95\n")

	res, err := Run(context.Background(), Options{Dir: dir, Tiers: reviewedTiers()})
	assert.NilError(t, err)
	rs := res.Report.RightSizing
	assert.Assert(t, rs != nil)
	byTier := map[string]TierFit{}
	for _, f := range rs.Tiers {
		byTier[f.Tier] = f
	}
	assert.Check(t, is.Len(byTier, 2))
	assert.Check(t, is.Equal(byTier["ada24"].PeakMemoryGiB, 9.0))
	assert.Check(t, is.Equal(byTier["ada24"].SmallestFit, "ampere16"))
	assert.Check(t, byTier["hopper80"].PeakMemoryGiB > 50, "the H100 pod's own samples: %v", byTier["hopper80"].PeakMemoryGiB)
	assert.Check(t, is.Equal(byTier["hopper80"].SmallestFit, "hopper80"))
}
