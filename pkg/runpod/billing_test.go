package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

var (
	billingStart = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	billingEnd   = billingStart.AddDate(0, 0, 1)
)

func TestPodBillingDecodesTheContractExample(t *testing.T) {
	for _, tc := range []struct {
		op, route string
		read      func(*Client, context.Context, BillingQuery) ([]BillingRecord, error)
		want      BillingRecord
	}{
		{"listPodBilling", "GET /v2/billing/pods", (*Client).PodBilling,
			BillingRecord{ID: "7h9k2m4n6p", Start: billingStart, End: billingEnd, Total: 12.34, GPU: 11.1, Disk: 1.24}},
		{"listServerlessBilling", "GET /v2/billing/serverless", (*Client).ServerlessBilling,
			BillingRecord{ID: "4m7x2k9q", Start: billingStart, End: billingEnd, Total: 8.9, GPU: 7.5, Disk: 0.4, Fee: 1.0}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			examples := responseExamples(t, tc.op)
			assert.Assert(t, len(examples) > 0)
			for _, ex := range examples {
				if ex.status != "200" {
					continue
				}
				fake := newFake(t)
				fake.answer(tc.route, http.StatusOK, string(ex.value))
				client, _ := fake.client()
				got, err := tc.read(client, context.Background(), BillingQuery{Start: billingStart, End: billingEnd})
				assert.NilError(t, err)
				assert.DeepEqual(t, got, []BillingRecord{tc.want})
				req := fake.received()
				assert.Assert(t, is.Len(req, 1))
				q, err := url.ParseQuery(req[0].query)
				assert.NilError(t, err)
				assert.DeepEqual(t, q, url.Values{"startTime": {"2026-06-01T00:00:00Z"}, "endTime": {"2026-06-02T00:00:00Z"}, "bucketSize": {"day"}})
			}
		})
	}
}

func TestBillingSendsTheIDFilterOfItsRoute(t *testing.T) {
	fake := newFake(t)
	fake.answer("GET /v2/billing/serverless", http.StatusOK, `{"records":[],"metadata":{}}`)
	client, _ := fake.client()
	_, err := client.ServerlessBilling(context.Background(), BillingQuery{Start: billingStart, End: billingEnd, Bucket: BucketHour, ID: "ep1"})
	assert.NilError(t, err)
	q, err := url.ParseQuery(fake.received()[0].query)
	assert.NilError(t, err)
	assert.Equal(t, q.Get("serverlessId"), "ep1")
	assert.Equal(t, q.Get("bucketSize"), "hour")
	assert.Check(t, !q.Has("podId"))
}

func TestBillingRefusesQueriesItCannotAskExactly(t *testing.T) {
	client, _ := newFake(t).client()
	for _, tc := range []struct {
		name string
		q    BillingQuery
		want string
	}{
		{"no window", BillingQuery{}, "start and end are both required"},
		{"empty window", BillingQuery{Start: billingStart, End: billingStart}, "is not after start"},
		{"unknown bucket", BillingQuery{Start: billingStart, End: billingEnd, Bucket: "fortnight"}, `bucket "fortnight"`},
	} {
		_, err := client.PodBilling(context.Background(), tc.q)
		assert.Check(t, errors.Is(err, ErrInvalidRequest), "%s: %v", tc.name, err)
		assert.Check(t, is.ErrorContains(err, tc.want), tc.name)
	}
}

// A bill read in part would understate spend: a record that cannot be used
// makes the whole answer malformed.
func TestBillingRefusesRecordsItCannotUse(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"no records", `{"metadata":{}}`, `no "records" array`},
		{"no pod id", `{"records":[{"startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z","totalAmount":1}]}`, "no podId"},
		{"another pod", `{"records":[{"podId":"other","startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z","totalAmount":1}]}`, `answers a query for "p1"`},
		{"no total", `{"records":[{"podId":"p1","startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z"}]}`, "no totalAmount"},
		{"negative", `{"records":[{"podId":"p1","startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z","totalAmount":-1}]}`, "totalAmount -1"},
		{"bucket reversed", `{"records":[{"podId":"p1","startTime":"2026-06-02T00:00:00Z","endTime":"2026-06-01T00:00:00Z","totalAmount":1}]}`, "no bucket"},
		{"bucket after the window", `{"records":[{"podId":"p1","startTime":"2026-06-02T00:00:00Z","endTime":"2026-06-03T00:00:00Z","totalAmount":1}]}`, "outside the window"},
		{"bucket before the window", `{"records":[{"podId":"p1","startTime":"2026-05-31T00:00:00Z","endTime":"2026-06-01T00:00:00Z","totalAmount":1}]}`, "outside the window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			fake.answer("GET /v2/billing/pods", http.StatusOK, tc.body)
			client, _ := fake.client()
			_, err := client.PodBilling(context.Background(), BillingQuery{Start: billingStart, End: billingEnd, ID: "p1"})
			assert.Assert(t, errors.Is(err, ErrMalformedResponse), "got %v", err)
			assert.Check(t, is.ErrorContains(err, tc.want))
			assert.Check(t, is.ErrorContains(err, "read pod billing"))
		})
	}
}

// The billing call goes through the shared request policy: a 429 is waited
// out for its Retry-After and asked again, with the suite's headers.
func TestBillingFollowsTheRequestPolicy(t *testing.T) {
	fake := newFake(t)
	ok := `{"records":[{"podId":"p1","startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z","totalAmount":0.5,"gpuAmount":0.5,"cpuAmount":0,"diskAmount":0}]}`
	fake.sequence("GET /v2/billing/pods",
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			writeRaw(w, http.StatusTooManyRequests, `{"title":"Too Many Requests","status":429,"detail":"slow down"}`)
		},
		func(w http.ResponseWriter, r *http.Request) { writeRaw(w, http.StatusOK, ok) })
	client, tp := fake.client()
	got, err := client.PodBilling(context.Background(), BillingQuery{Start: billingStart, End: billingEnd})
	assert.NilError(t, err)
	assert.Equal(t, len(got), 1)
	assert.Equal(t, got[0].Total, 0.5)
	assert.DeepEqual(t, tp.waits, []time.Duration{7 * time.Second})
	for _, r := range fake.received() {
		assert.Check(t, is.Equal(r.authorization, "Bearer "+testAPIKey))
		assert.Check(t, is.Contains(r.userAgent, "runpod-gpu"))
	}
}

// FuzzBillingRecord: any record either is refused or is one whose id, bucket
// and amounts are usable: an id of the route, a bucket overlapping the window
// asked for, finite amounts of 0 or more.
func FuzzBillingRecord(f *testing.F) {
	f.Add(`{"podId":"p1","startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-02T00:00:00Z","totalAmount":12.34,"gpuAmount":11.1,"cpuAmount":0,"diskAmount":1.24}`, false)
	f.Add(`{"serverlessId":"e1","startTime":"2026-06-01T00:00:00Z","endTime":"2026-06-01T01:00:00Z","totalAmount":0,"feeAmount":1e308}`, true)
	f.Add(`{"podId":"","startTime":null,"totalAmount":-0}`, false)
	f.Add(`{"podId":"p","startTime":"2026-05-31T23:00:00-01:00","endTime":"2026-06-03T00:00:00Z","totalAmount":1}`, false)
	q := BillingQuery{Start: billingStart, End: billingEnd}
	f.Fuzz(func(t *testing.T, body string, serverless bool) {
		var w billingRecordWire
		if json.Unmarshal([]byte(body), &w) != nil {
			return
		}
		idParam := "podId"
		if serverless {
			idParam = "serverlessId"
		}
		r, err := w.record(idParam, q)
		if err != nil {
			return
		}
		switch {
		case r.ID == "":
			t.Fatalf("accepted a record without an id: %s", body)
		case !r.End.After(r.Start) || !r.Start.Before(q.End) || !r.End.After(q.Start):
			t.Fatalf("accepted a bucket %s..%s outside the window: %s", r.Start, r.End, body)
		}
		for _, v := range []float64{r.Total, r.GPU, r.CPU, r.Disk, r.Fee} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				t.Fatalf("accepted amount %v: %s", v, body)
			}
		}
	})
}
