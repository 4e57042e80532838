package history

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/mdtable"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// Network volumes (config network_volume) bill their storage by the hour,
// whether or not a pod mounts them: the cost history shows that storage as
// RunPod billed it (GET /v2/billing/network-volumes), apart from the pods
// and endpoints it reconciles, and the budget's record leaves it out as the
// live budget check does (it reads pod billing).

// VolumeBillingSource reads network-volume billing (the runpod client does).
// A BillingSource that is one too has its volumes' storage in the bill.
type VolumeBillingSource interface {
	NetworkVolumeBilling(ctx context.Context, q runpod.BillingQuery) ([]runpod.VolumeBillingRecord, error)
}

// VolumeStorage is what one network volume's storage was billed in the window.
type VolumeStorage struct {
	ID        string       `json:"id"`
	Days      []string     `json:"days"`
	BilledUSD money.Amount `json:"billedUsd"`
}

// fetchVolumeBilling adds the volumes' storage charges of q to b when src
// can read them.
func fetchVolumeBilling(ctx context.Context, src BillingSource, q runpod.BillingQuery, b *SavedBilling) error {
	vs, ok := src.(VolumeBillingSource)
	if !ok {
		return nil
	}
	records, err := vs.NetworkVolumeBilling(ctx, q)
	if err != nil {
		return err
	}
	for _, r := range records {
		b.Charges = append(b.Charges, BilledCharge{Kind: KindNetworkVolume, ID: r.ID, Start: r.Start, End: r.End, USD: money.FromDollars(r.Total)})
	}
	return nil
}

// volumeStorage sums each network volume's storage charges.
func (rec *Reconciliation) volumeStorage(charges []BilledCharge) {
	volumes := groupInto(&rec.Volumes)
	for _, c := range charges {
		if c.Kind != KindNetworkVolume {
			continue
		}
		v := volumes.row(c.ID, func() VolumeStorage { return VolumeStorage{ID: c.ID, Days: []string{}} })
		v.BilledUSD += c.USD
		if !slices.Contains(v.Days, c.day()) {
			v.Days = append(v.Days, c.day())
		}
	}
	for i := range rec.Volumes {
		slices.Sort(rec.Volumes[i].Days)
	}
	slices.SortFunc(rec.Volumes, func(a, b VolumeStorage) int { return strings.Compare(a.ID, b.ID) })
}

// writeVolumes shows the volumes' storage as billed.
func (rec *Reconciliation) writeVolumes(b *strings.Builder) {
	if len(rec.Volumes) == 0 {
		return
	}
	tb := mdtable.New("Network volume", "Days billed", "First day", "Last day", "Storage billed").AlignRight(1, 4)
	total := money.Amount(0)
	for _, v := range rec.Volumes {
		tb.Row(mdtable.Code(v.ID), fmt.Sprint(len(v.Days)), v.Days[0], v.Days[len(v.Days)-1], usd(v.BilledUSD))
		total += v.BilledUSD
	}
	fmt.Fprintf(b, "Network volume storage (warm data; billed by the hour whether or not a pod mounts it, and not counted in the budget): **%s**.\n\n%s\n", usd(total), tb.String())
}
