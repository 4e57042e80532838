package history

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// RightSizeHeadroom is how much more memory than the peak the tests used a
// tier must have to be advised: 20 % to spare for runs that use more.
const RightSizeHeadroom = 1.2

// TierOffer is one reviewed tier of the configuration as the right-sizing
// advice weighs it.
type TierOffer struct {
	Name   string   `json:"name"`
	GPUIDs []string `json:"gpuIds"`
	// MemoryGB is the least memory among its GPUs (a pod may land on any of
	// them); 0 when the catalog does not say.
	MemoryGB int `json:"memoryGb"`
	// PricePerHour is its cheapest secure list price; 0 when unknown.
	PricePerHour money.Rate `json:"pricePerHour"`
}

// TierOffers describes the configuration's reviewed tiers from the GPU
// catalog (nil types: memory and price unknown).
func TierOffers(cfg *config.Config, types []runpod.GPUType) []TierOffer {
	byID := map[string]runpod.GPUType{}
	for _, t := range types {
		byID[t.ID] = t
	}
	offers := make([]TierOffer, 0, len(cfg.GPUTiers))
	for _, tier := range cfg.GPUTiers {
		o := TierOffer{Name: tier.Name, GPUIDs: slices.Clone(tier.GPUIDs)}
		known := true
		for _, id := range tier.GPUIDs {
			t, ok := byID[id]
			if !ok || t.Memory <= 0 {
				known = false
				continue
			}
			if o.MemoryGB == 0 || t.Memory < o.MemoryGB {
				o.MemoryGB = t.Memory
			}
			if p := money.PerHour(float64(t.Price.Secure) * float64(cfg.GPUCount)); p > 0 && (o.PricePerHour == 0 || p < o.PricePerHour) {
				o.PricePerHour = p
			}
		}
		if !known {
			o.MemoryGB = 0 // one GPU of unknown memory: the tier's floor is unknown
		}
		offers = append(offers, o)
	}
	return offers
}

// RightSizing is, per tier the lane's accepted pods ran on, what the tests
// recorded of the GPU, and the smallest and the cheapest reviewed tier that
// would have held them.
type RightSizing struct {
	Headroom float64     `json:"headroom"`
	Tiers    []TierFit   `json:"tiers"`
	Offers   []TierOffer `json:"offers"` // the reviewed tiers weighed; empty without a configuration
	Notes    []string    `json:"notes"`
}

// TierFit is one tier's recorded usage and the advice it leads to.
type TierFit struct {
	Tier           string     `json:"tier"`
	GPUs           []string   `json:"gpus"` // as nvidia-smi named them
	Runs           int        `json:"runs"` // attempts that recorded their usage
	PeakMemoryGiB  float64    `json:"peakMemoryGiB"`
	MemoryGiB      float64    `json:"memoryGiB"` // the card's, as recorded
	PeakUtilPct    int        `json:"peakUtilizationPercent"`
	MeanUtilPct    float64    `json:"meanUtilizationPercent"`
	PricePerHour   money.Rate `json:"pricePerHour"` // what its pods were billed at, on average
	SmallestFit    string     `json:"smallestFit"`  // the smallest reviewed tier holding the peak with headroom; "" when none is known
	Cheaper        string     `json:"cheaper"`      // the cheapest such tier, when cheaper than this one
	CheaperPerHour money.Rate `json:"cheaperPerHour,omitempty"`
	Advice         string     `json:"advice"`
	samples        int
	utilSum        float64
	priceSum       money.Rate
	priced         int
}

// rightSize gathers the accepted pods' recorded usage per tier and weighs
// the reviewed tiers against it.
func (r *Report) rightSize(offers []TierOffer) *RightSizing {
	rs := &RightSizing{Headroom: RightSizeHeadroom, Tiers: []TierFit{}, Offers: offers, Notes: []string{}}
	tiers := groupInto(&rs.Tiers)
	for _, a := range r.Attempts {
		if a.GPUUsage == nil && len(a.PodGPUUsage) == 0 {
			continue
		}
		var accepted []Pod
		for _, p := range a.Pods {
			if p.Outcome == cost.OutcomeAccepted && p.DuplicateOf == "" {
				accepted = append(accepted, p)
			}
		}
		if len(accepted) == 0 {
			rs.Notes = append(rs.Notes, fmt.Sprintf("%s recorded its GPU's usage but no accepted pod: left out", a.name()))
			continue
		}
		for _, pod := range accepted {
			u, ok := a.usageOf(pod, len(accepted))
			if !ok {
				continue
			}
			tier := cmp.Or(pod.Tier, "unknown tier ("+pod.GPU+")")
			tiers.row(tier, func() TierFit { return TierFit{Tier: tier, GPUs: []string{}} }).add(u, pod.Price)
		}
	}
	for i := range rs.Tiers {
		rs.Tiers[i].advise(offers)
	}
	if len(rs.Tiers) == 0 {
		return nil
	}
	if len(offers) == 0 {
		rs.Notes = append(rs.Notes, "no configuration was given (config-path), so no reviewed tier is weighed")
	}
	return rs
}

// add counts one run's usage.
func (t *TierFit) add(u GPUUsage, price cost.Price) {
	t.Runs++
	t.PeakMemoryGiB = max(t.PeakMemoryGiB, gib(u.PeakMemoryMiB))
	t.MemoryGiB = max(t.MemoryGiB, gib(u.TotalMemoryMiB))
	t.PeakUtilPct = max(t.PeakUtilPct, u.PeakUtilPct)
	t.samples += u.Samples
	t.utilSum += u.MeanUtilPct * float64(u.Samples)
	t.MeanUtilPct = math.Round(t.utilSum/float64(t.samples)*10) / 10
	if u.GPU != "" && !slices.Contains(t.GPUs, u.GPU) {
		t.GPUs = append(t.GPUs, u.GPU)
	}
	if price.Known {
		t.priceSum += price.PerHour
		t.priced++
		t.PricePerHour = averageRate(t.priceSum, t.priced)
	}
}

// averageRate is sum over n prices, to the nearest hundredth of a cent per
// hour (the precision the average is shown and kept at).
func averageRate(sum money.Rate, n int) money.Rate {
	const unit = money.Rate(money.Cent / 100)
	avg := (sum + money.Rate(n/2)) / money.Rate(n)
	return (avg + unit/2) / unit * unit
}

func gib(mib int) float64 { return math.Round(float64(mib)/1024*10) / 10 }

// advise names the smallest reviewed tier whose memory holds the peak with
// headroom, and the cheapest one when it costs less than this tier.
func (t *TierFit) advise(offers []TierOffer) {
	need := t.PeakMemoryGiB * RightSizeHeadroom
	price := t.PricePerHour
	if i := slices.IndexFunc(offers, func(o TierOffer) bool { return o.Name == t.Tier }); i >= 0 && offers[i].PricePerHour > 0 {
		price = offers[i].PricePerHour
	}
	var smallest, cheapest *TierOffer
	for i := range offers {
		o := &offers[i]
		if o.MemoryGB <= 0 || float64(o.MemoryGB) < need {
			continue
		}
		if smallest == nil || o.MemoryGB < smallest.MemoryGB || o.MemoryGB == smallest.MemoryGB && o.PricePerHour < smallest.PricePerHour {
			smallest = o
		}
		if o.PricePerHour > 0 && (cheapest == nil || o.PricePerHour < cheapest.PricePerHour) {
			cheapest = o
		}
	}
	usage := fmt.Sprintf("peak %.1f GiB of %.1f GiB, utilisation peak %d %%, mean %.1f %% over %d run(s)", t.PeakMemoryGiB, t.MemoryGiB, t.PeakUtilPct, t.MeanUtilPct, t.Runs)
	switch {
	case smallest == nil:
		t.Advice = usage + fmt.Sprintf("; no reviewed tier of known memory holds %.1f GiB (the peak with %.0f %% to spare)", need, (RightSizeHeadroom-1)*100)
		return
	case smallest.Name == t.Tier:
		t.SmallestFit = smallest.Name
		t.Advice = usage + "; this is already the smallest reviewed tier that holds it"
		return
	}
	t.SmallestFit = smallest.Name
	t.Advice = usage + fmt.Sprintf("; the smallest reviewed tier that holds it is %s (%d GB)", smallest.Name, smallest.MemoryGB)
	if cheapest != nil && price > 0 && cheapest.PricePerHour < price && cheapest.Name != t.Tier {
		t.Cheaper, t.CheaperPerHour = cheapest.Name, cheapest.PricePerHour
		t.Advice += fmt.Sprintf("; %s (%d GB at %s) would have held it for %s less", cheapest.Name, cheapest.MemoryGB,
			cheapest.PricePerHour.Format(money.Cents), (price - cheapest.PricePerHour).Format(money.Cents))
	}
}
