package runpod

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// NetworkVolume is persistent network storage in one data center (the
// contract's NetworkVolume): a pod mounts it only in that data center.
type NetworkVolume struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Size       int    `json:"size"`       // GB
	DataCenter string `json:"dataCenter"` // e.g. "EU-RO-1"; immutable
	Type       string `json:"type"`       // "STANDARD" or "HIGH_PERFORMANCE"
}

// GetNetworkVolume reads one of the account's network volumes (GET
// /v2/network-volumes/{id}). A volume of another account answers 403
// (ErrForbidden) or 404 (ErrNotFound), as a missing one does; either way
// the key cannot mount it.
func (c *Client) GetNetworkVolume(ctx context.Context, id string) (*NetworkVolume, error) {
	op := "get network volume " + strconv.Quote(id)
	if strings.TrimSpace(id) == "" {
		return nil, invalidArgument(op, "network volume id is empty")
	}
	var v NetworkVolume
	if err := c.getJSON(ctx, call{op: op, method: http.MethodGet, path: "/v2/network-volumes/" + url.PathEscape(id)}, &v); err != nil {
		return nil, err
	}
	switch {
	case v.ID != id:
		return nil, c.malformed(op, http.StatusOK, fmt.Errorf("the answer describes network volume %q", v.ID))
	case strings.TrimSpace(v.DataCenter) == "":
		return nil, c.malformed(op, http.StatusOK, fmt.Errorf("network volume %q names no data center", v.ID))
	}
	return &v, nil
}

// ListNetworkVolumes lists the account's network volumes (GET /v2/network-volumes).
func (c *Client) ListNetworkVolumes(ctx context.Context) ([]NetworkVolume, error) {
	op := "list network volumes"
	var out struct {
		NetworkVolumes *[]NetworkVolume `json:"networkVolumes"`
	}
	if err := c.getJSON(ctx, call{op: op, method: http.MethodGet, path: "/v2/network-volumes"}, &out); err != nil {
		return nil, err
	}
	if out.NetworkVolumes == nil {
		return nil, c.malformed(op, http.StatusOK, fmt.Errorf(`no "networkVolumes" array in the answer`))
	}
	return *out.NetworkVolumes, nil
}

// VolumeBillingRecord is what RunPod billed one network volume's storage in
// one time bucket [Start, End) (GET /v2/billing/network-volumes). Amounts are
// US dollars as billed.
type VolumeBillingRecord struct {
	ID              string // networkVolumeId
	Start, End      time.Time
	Total           float64 // totalAmount
	Standard        float64 // standardAmount
	HighPerformance float64 // highPerformanceAmount
}

// volumeBillingWire is a record as the route sends it.
type volumeBillingWire struct {
	StartTime             *time.Time `json:"startTime"`
	EndTime               *time.Time `json:"endTime"`
	NetworkVolumeID       *string    `json:"networkVolumeId"`
	TotalAmount           *float64   `json:"totalAmount"`
	StandardAmount        float64    `json:"standardAmount"`
	HighPerformanceAmount float64    `json:"highPerformanceAmount"`
}

// NetworkVolumeBilling reads what RunPod billed each network volume's
// storage per bucket of q (GET /v2/billing/network-volumes; q.ID narrows it
// to one volume). Every record is checked as the pod billing's are: one that
// fails is a malformed answer, never a record left out.
func (c *Client) NetworkVolumeBilling(ctx context.Context, q BillingQuery) ([]VolumeBillingRecord, error) {
	op := "read network volume billing"
	query, err := q.values(op, "networkVolumeId")
	if err != nil {
		return nil, err
	}
	return billingRecords(ctx, c, call{op: op, method: http.MethodGet, path: "/v2/billing/network-volumes", query: query},
		func(w volumeBillingWire) (VolumeBillingRecord, error) { return w.record(q) })
}

// record checks one wire record against the query it answers.
func (w volumeBillingWire) record(q BillingQuery) (VolumeBillingRecord, error) {
	switch id := w.NetworkVolumeID; {
	case id == nil || *id == "":
		return VolumeBillingRecord{}, fmt.Errorf("no networkVolumeId")
	case q.ID != "" && *id != q.ID:
		return VolumeBillingRecord{}, fmt.Errorf("networkVolumeId %q answers a query for %q", *id, q.ID)
	case w.StartTime == nil || w.EndTime == nil || !w.EndTime.After(*w.StartTime):
		return VolumeBillingRecord{}, fmt.Errorf("networkVolumeId %q: no bucket (startTime before endTime)", *id)
	case !w.StartTime.Before(q.End) || !w.EndTime.After(q.Start):
		return VolumeBillingRecord{}, fmt.Errorf("networkVolumeId %q: bucket %s..%s lies outside the window asked for", *id,
			w.StartTime.UTC().Format(time.RFC3339), w.EndTime.UTC().Format(time.RFC3339))
	case w.TotalAmount == nil:
		return VolumeBillingRecord{}, fmt.Errorf("networkVolumeId %q: no totalAmount", *id)
	}
	id := *w.NetworkVolumeID
	for name, v := range map[string]float64{"totalAmount": *w.TotalAmount, "standardAmount": w.StandardAmount, "highPerformanceAmount": w.HighPerformanceAmount} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return VolumeBillingRecord{}, fmt.Errorf("networkVolumeId %q: %s %v; want a finite amount of 0 or more", id, name, v)
		}
	}
	return VolumeBillingRecord{ID: id, Start: w.StartTime.UTC(), End: w.EndTime.UTC(), Total: *w.TotalAmount,
		Standard: w.StandardAmount, HighPerformance: w.HighPerformanceAmount}, nil
}
