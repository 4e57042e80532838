package smoke

import "fmt"

// TierName names a runtime tier.
type TierName string

// The two runtime tiers, mirroring the GPU workflow's runtime selection.
const (
	TierFull     TierName = "full"
	TierBaseline TierName = "baseline"
)

// Tiers holds the CUDA release each runtime tier needs; Full must not be older than Baseline.
type Tiers struct {
	Full, Baseline Version
}

// DefaultTiers are the spec's defaults: 12.8 full, 12.6 baseline.
var DefaultTiers = Tiers{Full: Version{Major: 12, Minor: 8}, Baseline: Version{Major: 12, Minor: 6}}

// Tier is a selected runtime tier and the PTX ISA the proof emits for it.
type Tier struct {
	Name TierName
	CUDA Version
	PTX  ISA
}

// Select picks the newest tier the driver reaches: ≥ Full → full, ≥ Baseline → baseline, else
// ErrNoRuntimeTier. The PTX ISA is the tier's own, not the driver's, because the point is to
// prove the driver loads what the tier's toolchain emits.
func (t Tiers) Select(driver Version) (Tier, error) {
	var tier Tier
	switch {
	case driver.AtLeast(t.Full):
		tier = Tier{Name: TierFull, CUDA: t.Full}
	case driver.AtLeast(t.Baseline):
		tier = Tier{Name: TierBaseline, CUDA: t.Baseline}
	default:
		return Tier{}, fmt.Errorf("%w: driver CUDA %s is below baseline %s", ErrNoRuntimeTier, driver, t.Baseline)
	}
	isa, err := PTXISAFor(tier.CUDA)
	if err != nil {
		return Tier{}, err
	}
	tier.PTX = isa
	return tier, nil
}

// validate checks the order of the tiers and that both have a known PTX ISA.
func (t Tiers) validate() error {
	if !t.Full.AtLeast(t.Baseline) {
		return &ConfigError{Flag: "full-tier", Env: "SMOKE_FULL_TIER", Value: t.Full.String(),
			Want: fmt.Sprintf("must not be older than the baseline tier %s", t.Baseline)}
	}
	for _, c := range []struct {
		flag, env string
		v         Version
	}{{"full-tier", "SMOKE_FULL_TIER", t.Full}, {"baseline-tier", "SMOKE_BASELINE_TIER", t.Baseline}} {
		if _, err := PTXISAFor(c.v); err != nil {
			return &ConfigError{Flag: c.flag, Env: c.env, Value: c.v.String(), Want: err.Error()}
		}
	}
	return nil
}
