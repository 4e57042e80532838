package runpodsim

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"
)

// Network volumes: GET|POST /v2/network-volumes, GET|PATCH|DELETE
// /v2/network-volumes/{id} and GET /v2/billing/network-volumes, as the
// contract describes them. A volume lives in one data center; a pod mounting
// it (mounts.network) is placed there or refused. A volume of another account
// (NetworkVolume.Account) answers 403 and cannot be mounted, as the API keeps
// one account's volumes from another's key. Storage bills from creation to
// deletion at the volume's monthly rate per GB (VolumePricePerGBMonth).

// VolumePricePerGBMonth is what a network volume's storage costs per GB and
// month (RunPod's published rate below 1 TB); a month is 730 hours.
const VolumePricePerGBMonth = 0.07

// hoursPerMonth turns a monthly storage rate into an hourly one.
const hoursPerMonth = 730

// streamVolumeID draws the ids of volumes created through the API.
const streamVolumeID = 60

// NetworkVolume is a volume the simulated account (or another) holds at the start.
type NetworkVolume struct {
	ID         string
	Name       string
	Size       int    // GB, 10-4096
	DataCenter string // a data center of the market
	Type       string // STANDARD (default) or HIGH_PERFORMANCE
	// Account is "" for the simulated account's own volume; any other value
	// makes it another account's, which this key can neither read nor mount.
	Account string
	// Since is when its storage started billing (default the clock's start).
	Since time.Time
}

// volume is a network volume's state.
type volume struct {
	NetworkVolume
	deleted time.Time // zero while it exists
}

// WithNetworkVolumes gives the account (and others) these volumes at the start.
func WithNetworkVolumes(vols ...NetworkVolume) Option {
	return func(c *config) { c.volumes = append(c.volumes, vols...) }
}

// registerVolumes adds the network-volume routes and seeds the volumes.
func (s *Server) registerVolumes() error {
	for _, v := range s.cfg.volumes {
		switch {
		case v.ID == "" || v.DataCenter == "":
			return fmt.Errorf("runpodsim: network volume %q needs an id and a data center", v.ID)
		case s.market.dcByID[v.DataCenter] == nil:
			return fmt.Errorf("runpodsim: network volume %q: data center %q is not in the market", v.ID, v.DataCenter)
		case s.volumeByID(v.ID) != nil:
			return fmt.Errorf("runpodsim: network volume %q given twice", v.ID)
		}
		v.Type = cmp.Or(v.Type, "STANDARD")
		if v.Since.IsZero() {
			v.Since = s.cfg.clock.Now()
		}
		s.volumes = append(s.volumes, &volume{NetworkVolume: v})
	}
	s.handle("/v2/network-volumes", map[string]handler{http.MethodGet: s.listVolumes, http.MethodPost: s.createVolume})
	s.handle("/v2/network-volumes/{id}", map[string]handler{http.MethodGet: s.getVolume, http.MethodPatch: s.patchVolume, http.MethodDelete: s.deleteVolume})
	s.handle("/v2/billing/network-volumes", map[string]handler{http.MethodGet: s.volumeBilling})
	return nil
}

// volumeByID returns the volume with id, deleted or not, of any account.
func (s *Server) volumeByID(id string) *volume {
	for _, v := range s.volumes {
		if v.ID == id {
			return v
		}
	}
	return nil
}

// ownVolume finds a live volume of the account for the route's {id}, or the
// answer to send: 404 when there is none, 403 when another account holds it.
func (s *Server) ownVolume(id string) (*volume, *response) {
	v := s.volumeByID(id)
	switch {
	case v == nil || !v.deleted.IsZero():
		resp := problemResponse(http.StatusNotFound, "network volume %q not found", id)
		return nil, &resp
	case v.Account != "":
		resp := problemResponse(http.StatusForbidden, "you do not have access to network volume %q", id)
		return nil, &resp
	}
	return v, nil
}

// bodilessVolume is ownVolume for a request that must carry no body.
func (s *Server) bodilessVolume(r *http.Request, body []byte) (*volume, *response) {
	if resp, valid := s.noBody(r, body); !valid {
		return nil, &resp
	}
	return s.ownVolume(r.PathValue("id"))
}

// volumeBody is a NetworkVolume as the API shows it.
type volumeBody struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Size       int    `json:"size"`
	DataCenter string `json:"dataCenter"`
	Type       string `json:"type"`
}

func (v *volume) body() volumeBody {
	return volumeBody{ID: v.ID, Name: v.Name, Size: v.Size, DataCenter: v.DataCenter, Type: v.Type}
}

func (s *Server) listVolumes(r *http.Request, body []byte, _ time.Time) response {
	if resp, valid := s.noBody(r, body); !valid {
		return resp
	}
	out := []volumeBody{}
	for _, v := range s.volumes {
		if v.Account == "" && v.deleted.IsZero() {
			out = append(out, v.body())
		}
	}
	return ok(http.StatusOK, map[string]any{"networkVolumes": out})
}

func (s *Server) getVolume(r *http.Request, body []byte, _ time.Time) response {
	v, bad := s.bodilessVolume(r, body)
	if bad != nil {
		return *bad
	}
	return ok(http.StatusOK, v.body())
}

func (s *Server) createVolume(r *http.Request, body []byte, now time.Time) response {
	if resp, valid := s.validateBody(r.Method, r.URL.Path, body); !valid {
		return resp
	}
	var req struct {
		Name       string `json:"name"`
		Size       int    `json:"size"`
		DataCenter string `json:"dataCenter"`
		Type       string `json:"type"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return problemResponse(http.StatusBadRequest, "request body: %v", err)
	}
	dc := s.market.dcByID[req.DataCenter]
	if dc == nil {
		return problemResponse(http.StatusBadRequest, "dataCenter %q is invalid: no such data center", req.DataCenter)
	}
	req.Type = cmp.Or(req.Type, "STANDARD")
	if !slices.Contains(dc.NetworkVolumeTypes, req.Type) {
		return problemResponse(http.StatusBadRequest, "data center %s offers no %s network volumes", req.DataCenter, req.Type)
	}
	id := randomID(rand.New(rand.NewPCG(s.cfg.seed, stream(streamVolumeID, len(s.volumes)+1))), 10)
	v := &volume{NetworkVolume: NetworkVolume{ID: id, Name: req.Name, Size: req.Size, DataCenter: req.DataCenter, Type: req.Type, Since: now}}
	s.volumes = append(s.volumes, v)
	return ok(http.StatusCreated, v.body())
}

func (s *Server) patchVolume(r *http.Request, body []byte, _ time.Time) response {
	if resp, valid := s.validateBody(r.Method, r.URL.Path, body); !valid {
		return resp
	}
	v, bad := s.ownVolume(r.PathValue("id"))
	if bad != nil {
		return *bad
	}
	var req struct {
		Name *string `json:"name"`
		Size *int    `json:"size"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return problemResponse(http.StatusBadRequest, "request body: %v", err)
	}
	if req.Size != nil && *req.Size < v.Size {
		return problemResponse(http.StatusBadRequest, "size %d is below the volume's %d GB: a network volume only grows", *req.Size, v.Size)
	}
	if req.Size != nil {
		v.Size = *req.Size
	}
	if req.Name != nil {
		v.Name = *req.Name
	}
	return ok(http.StatusOK, v.body())
}

func (s *Server) deleteVolume(r *http.Request, body []byte, now time.Time) response {
	v, bad := s.bodilessVolume(r, body)
	if bad != nil {
		return *bad
	}
	for _, p := range s.pods {
		if p.status != StatusTerminated && p.mounts.Network != nil && p.mounts.Network[0].VolumeID == v.ID {
			return problemResponse(http.StatusBadRequest, "network volume %q is mounted by pod %s", v.ID, p.id)
		}
	}
	v.deleted = now
	return response{status: http.StatusNoContent}
}

// mountVolume applies a create's network mount: the volume must be the
// account's, and the pod goes to its data center (a dataCenterIds list
// without it is refused).
func (s *Server) mountVolume(spec *podSpec) *response {
	if spec.Mounts == nil || len(spec.Mounts.Network) == 0 {
		return nil
	}
	id := spec.Mounts.Network[0].VolumeID
	v := s.volumeByID(id)
	if v == nil || !v.deleted.IsZero() || v.Account != "" {
		resp := problemResponse(http.StatusBadRequest, "network volume %q not found", id)
		return &resp
	}
	if len(spec.DataCenterIDs) > 0 && !slices.Contains(spec.DataCenterIDs, v.DataCenter) {
		resp := problemResponse(http.StatusBadRequest, "network volume %q is in %s, which dataCenterIds %v does not include: a pod mounts a network volume only in its data center", id, v.DataCenter, spec.DataCenterIDs)
		return &resp
	}
	spec.DataCenterIDs = []string{v.DataCenter}
	return nil
}

// pricePerHour is the volume's storage rate.
func (v *volume) pricePerHour() float64 {
	return float64(v.Size) * VolumePricePerGBMonth / hoursPerMonth
}

func (s *Server) volumeBilling(r *http.Request, _ []byte, now time.Time) response {
	w, bad := s.resolveBilling(r.URL.Query(), "networkVolumeId", now)
	if bad != nil {
		return *bad
	}
	var stretches []billedStretch
	highPerformance := map[string]bool{}
	for _, v := range s.volumes {
		if v.Account != "" {
			continue
		}
		end := v.deleted
		if end.IsZero() {
			end = now
		}
		stretches = append(stretches, billedStretch{v.ID, v.Since, end, v.pricePerHour()})
		highPerformance[v.ID] = v.Type == "HIGH_PERFORMANCE"
	}
	records := s.bucketize(s.reported(stretches, now), w)
	bodies := make([]map[string]any, 0, len(records))
	ids := map[string]bool{}
	var standard, fast float64
	for _, rec := range records {
		ids[rec.id] = true
		amount := rec.dollars()
		m := volumeAmounts(amount, highPerformance[rec.id])
		m["networkVolumeId"], m["startTime"], m["endTime"] = rec.id, rfc3339(rec.start), rfc3339(rec.end)
		bodies = append(bodies, m)
		if highPerformance[rec.id] {
			fast += amount
		} else {
			standard += amount
		}
	}
	totals := map[string]any{"totalAmount": round6(standard + fast), "standardAmount": round6(standard), "highPerformanceAmount": round6(fast)}
	return ok(http.StatusOK, map[string]any{
		"records": bodies,
		"metadata": map[string]any{"query": w.query("networkVolumeId"), "recordCount": len(records),
			"uniqueNetworkVolumeCount": len(ids), "totals": totals},
	})
}

// volumeAmounts splits a record's amount by the volume's storage tier.
func volumeAmounts(usd float64, highPerformance bool) map[string]any {
	if highPerformance {
		return map[string]any{"totalAmount": usd, "standardAmount": 0.0, "highPerformanceAmount": usd}
	}
	return map[string]any{"totalAmount": usd, "standardAmount": usd, "highPerformanceAmount": 0.0}
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
