package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/money"
)

// Volume is a network volume the lane's pods mount. RunPod attaches a network
// volume only to pods in its own data center, so a plan for it considers that
// data center alone (BuildWithVolume).
type Volume struct {
	ID           string
	DataCenterID string
	// WithoutVolume plans as if no volume were named when its data center
	// has no stock of a reviewed GPU (when_out_of_stock: without_volume);
	// otherwise the plan stays in the data center and the caller waits.
	WithoutVolume bool
}

// VolumeNote says how a network volume shaped a plan, and what the
// restriction costs against the cheapest candidate elsewhere.
type VolumeNote struct {
	ID           string
	DataCenterID string
	// InStock: the catalog shows a reviewed GPU in stock in the data center.
	InStock bool
	// CatalogFailed: the catalog could not be read, so neither stock nor cost is known.
	CatalogFailed bool
	// Mounted: the plan's candidates mount the volume; false when the plan
	// fell back to running without it.
	Mounted bool
	// Here is the cheapest offer in the volume's data center and Elsewhere
	// the cheapest outside it (within the configured clouds, regions and
	// zones); nil when there is none.
	Here, Elsewhere *DCOffer
}

// ExtraPerHour is what the cheapest pod in the volume's data center costs per
// hour above the cheapest elsewhere (negative when it is cheaper), and false
// when either is unknown.
func (n VolumeNote) ExtraPerHour() (money.Rate, bool) {
	if n.Here == nil || n.Elsewhere == nil {
		return 0, false
	}
	return n.Here.PricePerHour - n.Elsewhere.PricePerHour, true
}

// String is the plan's line about the volume.
func (n VolumeNote) String() string {
	head := fmt.Sprintf("network volume %s (%s): ", n.ID, n.DataCenterID)
	switch {
	case n.CatalogFailed:
		return head + "only " + n.DataCenterID + " is considered (the catalog was not read: what the restriction costs is not known)"
	case !n.Mounted:
		return head + "no reviewed GPU in stock in " + n.DataCenterID + ": planned without the volume (when_out_of_stock: without_volume); the pod mounts nothing and the job downloads its data"
	case !n.InStock:
		return head + "no reviewed GPU in stock in " + n.DataCenterID
	}
	here := fmt.Sprintf("its cheapest candidate, %s at %s,", n.Here.InstanceType(), n.Here.PricePerHour.Format(money.Cents))
	extra, known := n.ExtraPerHour()
	switch {
	case !known:
		return head + "only " + n.DataCenterID + " is considered; " + here + " has no candidate elsewhere to compare with"
	case extra > 0:
		return head + "only " + n.DataCenterID + " is considered; " + here + fmt.Sprintf(" costs %s more than the cheapest elsewhere (%s in %s at %s)",
			extra.Format(money.Cents), n.Elsewhere.InstanceType(), n.Elsewhere.DataCenterID, n.Elsewhere.PricePerHour.Format(money.Cents))
	}
	return head + "only " + n.DataCenterID + " is considered; " + here + fmt.Sprintf(" costs nothing more than the cheapest elsewhere (%s in %s at %s)",
		n.Elsewhere.InstanceType(), n.Elsewhere.DataCenterID, n.Elsewhere.PricePerHour.Format(money.Cents))
}

// VolumeExcluded returns why the configured regions or zones leave out the
// volume's data center, or "" when they do not (or cannot tell: the
// data-center list was not read).
func VolumeExcluded(in Input, dataCenterID string) string {
	if len(in.Zones) > 0 && !containsFold(in.Zones, dataCenterID) {
		return fmt.Sprintf("zones %s do not include it", strings.Join(in.Zones, ", "))
	}
	if len(in.Continents) == 0 && len(in.Countries) == 0 {
		return ""
	}
	region, known := in.DataCenterRegions[dataCenterID]
	if !known && len(in.CountryDataCenters) == 0 {
		return ""
	}
	if !InRegions(in.Continents, in.Countries, region, in.CountryDataCenters[dataCenterID]) {
		return fmt.Sprintf("regions %s do not include it", strings.Join(append(slices.Clone(in.Continents), in.Countries...), ", "))
	}
	return ""
}

// BuildWithVolume is Build restricted to the volume's data center, every
// candidate mounting it, with the plan's Volume note saying what the
// restriction costs. When the catalog shows no reviewed GPU in stock there,
// the plan falls back to Build without the volume if v.WithoutVolume, and
// otherwise stays restricted (InStock false: the caller waits and plans again).
func BuildWithVolume(in Input, v Volume) Plan {
	note := &VolumeNote{ID: v.ID, DataCenterID: v.DataCenterID, CatalogFailed: in.CatalogErr != nil, Mounted: true}
	if in.CatalogErr == nil {
		note.Here, note.Elsewhere = cheapestAroundVolume(in, v.DataCenterID)
		note.InStock = note.Here != nil
	}
	if !note.InStock && !note.CatalogFailed && v.WithoutVolume {
		note.Mounted = false
		p := Build(in)
		p.Volume = note
		return p
	}
	restricted := in
	restricted.Zones = []string{v.DataCenterID}
	restricted.PerDataCenter = true
	p := Build(restricted)
	for i := range p.Candidates {
		p.Candidates[i].NetworkVolumeID = v.ID
	}
	p.Volume = note
	return p
}

// cheapestAroundVolume returns the cheapest offer in dataCenterID and the
// cheapest outside it, among the reviewed GPU types in the allowed clouds,
// regions and zones.
func cheapestAroundVolume(in Input, dataCenterID string) (here, elsewhere *DCOffer) {
	var ids []string
	for _, t := range in.Tiers {
		ids = append(ids, t.GPUIDs...)
	}
	var allowed []Offer
	for _, o := range in.Offers {
		if cloudAllowed(in.Clouds, o.Cloud) {
			allowed = append(allowed, o)
		}
	}
	offers := DataCenterOffers(allowed, in.GPUCount, DCFilter{
		GPUIDs: ids, Continents: in.Continents, Countries: in.Countries, DataCenterRegions: in.DataCenterRegions,
		CountryDataCenters: in.CountryDataCenters, Zones: in.Zones, MinVRAMGB: in.MinVRAMGB,
	})
	for i := range offers { // cheapest first
		o := &offers[i]
		if strings.EqualFold(o.DataCenterID, dataCenterID) {
			if here == nil {
				here = o
			}
		} else if elsewhere == nil {
			elsewhere = o
		}
	}
	return here, elsewhere
}
