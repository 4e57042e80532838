package runpod

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"
)

// BillingBucket is the length of one billing time bucket (the contract's
// BillingBucketSize).
type BillingBucket string

// Bucket sizes the billing routes accept.
const (
	BucketHour  BillingBucket = "hour"
	BucketDay   BillingBucket = "day"
	BucketWeek  BillingBucket = "week"
	BucketMonth BillingBucket = "month"
	BucketYear  BillingBucket = "year"
)

// BillingQuery selects billing records: the half-open window [Start, End)
// split into buckets of Bucket (default day). RunPod snaps Start down and End
// up to bucket boundaries, so give boundary-aligned times (UTC midnight for
// days) to get exactly the window asked for.
type BillingQuery struct {
	Start, End time.Time
	Bucket     BillingBucket
	// ID narrows the answer to one pod (podId) or one Serverless endpoint
	// (serverlessId); empty lists every one.
	ID string
}

// values checks q and renders it as the billing routes' query parameters.
func (q BillingQuery) values(op, idParam string) (url.Values, error) {
	switch {
	case q.Start.IsZero() || q.End.IsZero():
		return nil, invalidArgument(op, "start and end are both required (the API's defaults, the last 30 days, would make the window depend on when it was asked)")
	case !q.End.After(q.Start):
		return nil, invalidArgument(op, "end %s is not after start %s", q.End.Format(time.RFC3339), q.Start.Format(time.RFC3339))
	}
	bucket := q.Bucket
	switch bucket {
	case "":
		bucket = BucketDay
	case BucketHour, BucketDay, BucketWeek, BucketMonth, BucketYear:
	default:
		return nil, invalidArgument(op, "bucket %q: want hour, day, week, month or year", q.Bucket)
	}
	v := url.Values{}
	v.Set("startTime", q.Start.UTC().Format(time.RFC3339))
	v.Set("endTime", q.End.UTC().Format(time.RFC3339))
	v.Set("bucketSize", string(bucket))
	if q.ID != "" {
		v.Set(idParam, q.ID)
	}
	return v, nil
}

// BillingRecord is what RunPod billed one pod or one Serverless endpoint in
// one time bucket [Start, End): the records of GET /v2/billing/pods and GET
// /v2/billing/serverless in one shape. Amounts are US dollars as billed.
type BillingRecord struct {
	ID         string // podId or serverlessId
	Start, End time.Time
	Total      float64 // totalAmount: every component below, and any the API adds
	GPU        float64
	CPU        float64
	Disk       float64
	Fee        float64 // Serverless platform fee; 0 for pods
}

// billingRecordWire is a record as either route sends it.
type billingRecordWire struct {
	StartTime    *time.Time `json:"startTime"`
	EndTime      *time.Time `json:"endTime"`
	PodID        *string    `json:"podId"`
	ServerlessID *string    `json:"serverlessId"`
	TotalAmount  *float64   `json:"totalAmount"`
	GPUAmount    float64    `json:"gpuAmount"`
	CPUAmount    float64    `json:"cpuAmount"`
	DiskAmount   float64    `json:"diskAmount"`
	FeeAmount    float64    `json:"feeAmount"`
}

// PodBilling reads what RunPod billed each pod per bucket of q (GET
// /v2/billing/pods), through the client's request policy like every call.
func (c *Client) PodBilling(ctx context.Context, q BillingQuery) ([]BillingRecord, error) {
	return c.billing(ctx, "read pod billing", "/v2/billing/pods", "podId", q)
}

// ServerlessBilling reads what RunPod billed each Serverless endpoint per
// bucket of q (GET /v2/billing/serverless). GET /v2/billing/endpoints is
// RunPod's public endpoints (its hosted models), which the suite never uses.
func (c *Client) ServerlessBilling(ctx context.Context, q BillingQuery) ([]BillingRecord, error) {
	return c.billing(ctx, "read Serverless billing", "/v2/billing/serverless", "serverlessId", q)
}

// billing reads one billing route and checks every record: an id of the
// route's kind, a bucket inside the window asked for (after RunPod's
// snapping to bucket boundaries) and finite, non-negative amounts. A record
// that fails is a malformed answer, never a record left out: a bill read in
// part would make spend look smaller than it is.
func (c *Client) billing(ctx context.Context, op, path, idParam string, q BillingQuery) ([]BillingRecord, error) {
	query, err := q.values(op, idParam)
	if err != nil {
		return nil, err
	}
	return billingRecords(ctx, c, call{op: op, method: http.MethodGet, path: path, query: query},
		func(w billingRecordWire) (BillingRecord, error) { return w.record(idParam, q) })
}

// billingRecords performs the billing read cl and checks each wire record W
// with check into an R; one that fails makes the whole answer malformed.
func billingRecords[W, R any](ctx context.Context, c *Client, cl call, check func(W) (R, error)) ([]R, error) {
	var out struct {
		Records *[]W `json:"records"`
	}
	wires, status, err := decodeArray(ctx, c, cl, &out, &out.Records, "records")
	if err != nil {
		return nil, err
	}
	records := make([]R, 0, len(wires))
	for i, w := range wires {
		r, err := check(w)
		if err != nil {
			return nil, c.malformed(cl.op, status, fmt.Errorf("record %d: %w", i, err))
		}
		records = append(records, r)
	}
	return records, nil
}

// record checks one wire record against the query it answers.
func (w billingRecordWire) record(idParam string, q BillingQuery) (BillingRecord, error) {
	id := w.PodID
	if idParam == "serverlessId" {
		id = w.ServerlessID
	}
	switch {
	case id == nil || *id == "":
		return BillingRecord{}, fmt.Errorf("no %s", idParam)
	case q.ID != "" && *id != q.ID:
		return BillingRecord{}, fmt.Errorf("%s %q answers a query for %q", idParam, *id, q.ID)
	case w.StartTime == nil || w.EndTime == nil || !w.EndTime.After(*w.StartTime):
		return BillingRecord{}, fmt.Errorf("%s %q: no bucket (startTime before endTime)", idParam, *id)
	case !w.StartTime.Before(q.End) || !w.EndTime.After(q.Start):
		return BillingRecord{}, fmt.Errorf("%s %q: bucket %s..%s lies outside the window asked for", idParam, *id,
			w.StartTime.UTC().Format(time.RFC3339), w.EndTime.UTC().Format(time.RFC3339))
	case w.TotalAmount == nil:
		return BillingRecord{}, fmt.Errorf("%s %q: no totalAmount", idParam, *id)
	}
	for name, v := range map[string]float64{"totalAmount": *w.TotalAmount, "gpuAmount": w.GPUAmount,
		"cpuAmount": w.CPUAmount, "diskAmount": w.DiskAmount, "feeAmount": w.FeeAmount} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return BillingRecord{}, fmt.Errorf("%s %q: %s %v; want a finite amount of 0 or more", idParam, *id, name, v)
		}
	}
	return BillingRecord{ID: *id, Start: w.StartTime.UTC(), End: w.EndTime.UTC(), Total: *w.TotalAmount,
		GPU: w.GPUAmount, CPU: w.CPUAmount, Disk: w.DiskAmount, Fee: w.FeeAmount}, nil
}
