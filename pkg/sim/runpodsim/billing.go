package runpodsim

import (
	"cmp"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Billing: GET /v2/billing/pods and GET /v2/billing/serverless answer from
// the same meter as [Server.Bill] and [Server.ServerlessBill]: each billed
// stretch (a pod's container run, a Serverless worker's life) is charged
// rounded up to the billing unit (a second unless [WithBillingRounding]
// says otherwise), its seconds fall into the buckets they ran in and the
// rounding's extra time into the bucket where the stretch ended (or now, for
// one still billing). With the default unit the records of a pod add up to
// its Bill exactly.

// WithBillingRounding makes the billing routes round each billed stretch up
// to a whole number of unit (default a second; time.Minute models a
// provider that bills started minutes), so tests can show the drift between
// the suite's per-second estimates and an invoice. The inspection methods
// (Bill, Spent, ServerlessBill) stay per second.
func WithBillingRounding(unit time.Duration) Option {
	return func(c *config) { c.billingUnit = unit }
}

// WithBillingDelay makes the billing routes show charges only once they are
// d old, as RunPod's billing rows appear with a delay: a pod deleted less
// than d ago has its last d of charges missing (one created and deleted
// within d has none), while the pod list no longer shows it either. The
// inspection methods (Bill, Spent, ServerlessBill) stay current.
func WithBillingDelay(d time.Duration) Option {
	return func(c *config) { c.billingDelay = d }
}

// reported cuts stretches at what the billing routes show by now (WithBillingDelay).
func (s *Server) reported(stretches []billedStretch, now time.Time) []billedStretch {
	if s.cfg.billingDelay <= 0 {
		return stretches
	}
	asOf := now.Add(-s.cfg.billingDelay)
	var out []billedStretch
	for _, st := range stretches {
		if st.from.Before(asOf) {
			st.to = minTime(st.to, asOf)
			out = append(out, st)
		}
	}
	return out
}

// defaultBillingWindow is the API's default window without startTime.
const defaultBillingWindow = 30 * 24 * time.Hour

// registerBilling adds the billing routes.
func (s *Server) registerBilling() {
	s.handle("/v2/billing/pods", map[string]handler{http.MethodGet: s.podBilling})
	s.handle("/v2/billing/serverless", map[string]handler{http.MethodGet: s.serverlessBilling})
}

// billingWindow is a resolved billing query.
type billingWindow struct {
	start, end time.Time
	bucket     string
	id         string // the id filter; "" for none
}

// billedStretch is one stretch the meter charges.
type billedStretch struct {
	id       string
	from, to time.Time
	price    float64 // per hour
}

// billingRecord is one resource's charge in one bucket.
type billingRecord struct {
	id         string
	start, end time.Time
	seconds    float64
	price      float64
}

func (s *Server) podBilling(r *http.Request, _ []byte, now time.Time) response {
	w, bad := s.resolveBilling(r.URL.Query(), "podId", now)
	if bad != nil {
		return *bad
	}
	var stretches []billedStretch
	for _, p := range s.pods {
		for _, iv := range p.stretches(now) {
			stretches = append(stretches, billedStretch{p.id, iv.from, iv.to, p.price})
		}
	}
	records := s.bucketize(s.reported(stretches, now), w)
	body := map[string]any{"records": billingBodies(records, "podId", false)}
	ids := map[string]bool{}
	for _, rec := range records {
		ids[rec.id] = true
	}
	body["metadata"] = map[string]any{"query": w.query("podId"), "recordCount": len(records),
		"uniquePodCount": len(ids), "totals": billingAmounts(sumRecords(records), false)}
	return ok(http.StatusOK, body)
}

func (s *Server) serverlessBilling(r *http.Request, _ []byte, now time.Time) response {
	w, bad := s.resolveBilling(r.URL.Query(), "serverlessId", now)
	if bad != nil {
		return *bad
	}
	price := s.serverlessPrice()
	var stretches []billedStretch
	for _, wk := range s.sls().workers {
		end := wk.stop
		if end.IsZero() {
			end = now
		}
		stretches = append(stretches, billedStretch{wk.endpointID, wk.start, end, price})
	}
	records := s.bucketize(s.reported(stretches, now), w)
	ids := map[string]bool{}
	for _, rec := range records {
		ids[rec.id] = true
	}
	return ok(http.StatusOK, map[string]any{
		"records": billingBodies(records, "serverlessId", true),
		"metadata": map[string]any{"query": w.query("serverlessId"), "recordCount": len(records),
			"uniqueServerlessCount": len(ids), "totals": billingAmounts(sumRecords(records), true)},
	})
}

// serverlessPrice is what a Serverless worker bills per hour (as ServerlessBill).
func (s *Server) serverlessPrice() float64 {
	if p := s.cfg.serverless.PricePerHour; p > 0 {
		return p
	}
	return 0.58
}

// stretches are p's billed stretches as of now, the running one included.
func (p *pod) stretches(now time.Time) []interval {
	out := slices.Clone(p.billed)
	if p.billing {
		out = append(out, interval{p.billedFrom, now})
	}
	return out
}

// resolveBilling reads a billing query as RunPod documents it: startTime
// (default 30 days ago) snapped down and endTime (default now) snapped up to
// the bucket's boundaries, or lastN buckets ending with the current one.
func (s *Server) resolveBilling(q url.Values, idParam string, now time.Time) (billingWindow, *response) {
	fail := func(format string, args ...any) (billingWindow, *response) {
		r := problemResponse(http.StatusBadRequest, format, args...)
		return billingWindow{}, &r
	}
	w := billingWindow{bucket: cmp.Or(q.Get("bucketSize"), "day"), id: q.Get(idParam)}
	if !slices.Contains([]string{"hour", "day", "week", "month", "year"}, w.bucket) {
		return fail("bucketSize %q: want hour, day, week, month or year", w.bucket)
	}
	times := map[string]*time.Time{"startTime": &w.start, "endTime": &w.end}
	for name, t := range times {
		if raw := q.Get(name); raw != "" {
			v, err := time.Parse(time.RFC3339, raw)
			if err != nil {
				return fail("%s %q: want an RFC 3339 time", name, raw)
			}
			*t = v.UTC()
		}
	}
	if raw := q.Get("lastN"); raw != "" {
		n, err := strconv.Atoi(raw)
		switch {
		case err != nil || n < 1:
			return fail("lastN %q: want an integer of 1 or more", raw)
		case !w.start.IsZero() || !w.end.IsZero():
			return fail("lastN and startTime/endTime are mutually exclusive; give one or the other")
		}
		w.end = bucketEnd(now, w.bucket)
		w.start = w.end
		for range n {
			w.start = bucketFloor(w.start.Add(-time.Nanosecond), w.bucket)
		}
		return w, nil
	}
	if w.start.IsZero() {
		w.start = now.Add(-defaultBillingWindow)
	}
	if w.end.IsZero() {
		w.end = now
	}
	w.start, w.end = bucketFloor(w.start, w.bucket), bucketEnd(w.end, w.bucket)
	if !w.end.After(w.start) {
		return fail("endTime %s is not after startTime %s", rfc3339(w.end), rfc3339(w.start))
	}
	return w, nil
}

// query is the metadata's echo of the resolved window.
func (w billingWindow) query(idParam string) map[string]any {
	var id any
	if w.id != "" {
		id = w.id
	}
	return map[string]any{"startTime": rfc3339(w.start), "endTime": rfc3339(w.end), "bucketSize": w.bucket, idParam: id}
}

// bucketFloor is the start of t's bucket (UTC; weeks start on Monday).
func bucketFloor(t time.Time, bucket string) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch bucket {
	case "hour":
		return t.Truncate(time.Hour)
	case "week":
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case "year":
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

// bucketNext is the start of the bucket after the one starting at floor.
func bucketNext(floor time.Time, bucket string) time.Time {
	switch bucket {
	case "hour":
		return floor.Add(time.Hour)
	case "week":
		return floor.AddDate(0, 0, 7)
	case "month":
		return floor.AddDate(0, 1, 0)
	case "year":
		return floor.AddDate(1, 0, 0)
	}
	return floor.AddDate(0, 0, 1)
}

// bucketEnd snaps t up to a bucket boundary (t itself when on one).
func bucketEnd(t time.Time, bucket string) time.Time {
	f := bucketFloor(t, bucket)
	if f.Equal(t.UTC()) {
		return f
	}
	return bucketNext(f, bucket)
}

// bucketize charges every stretch rounded up to the billing unit and splits
// it into the window's buckets: its own seconds where they ran, the
// rounding's extra in the bucket where it ended.
func (s *Server) bucketize(stretches []billedStretch, w billingWindow) []billingRecord {
	unit := max(s.cfg.billingUnit, time.Second)
	type key struct {
		id    string
		start time.Time
	}
	acc := map[key]*billingRecord{}
	add := func(id string, at time.Time, seconds, price float64) {
		if seconds <= 0 || at.Before(w.start) || !at.Before(w.end) {
			return
		}
		start := bucketFloor(at, w.bucket)
		k := key{id, start}
		if acc[k] == nil {
			acc[k] = &billingRecord{id: id, start: start, end: bucketNext(start, w.bucket), price: price}
		}
		acc[k].seconds += seconds
	}
	for _, st := range stretches {
		if w.id != "" && st.id != w.id || !st.to.After(st.from) {
			continue
		}
		for from := st.from; from.Before(st.to); {
			to := minTime(bucketNext(bucketFloor(from, w.bucket), w.bucket), st.to)
			add(st.id, from, to.Sub(from).Seconds(), st.price)
			from = to
		}
		d := st.to.Sub(st.from)
		charged := (d + unit - 1) / unit * unit
		add(st.id, st.to.Add(-time.Nanosecond), (charged - d).Seconds(), st.price)
	}
	out := make([]billingRecord, 0, len(acc))
	for _, r := range acc {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b billingRecord) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.id, b.id))
	})
	return out
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// dollars is the record's charge, rounded to micro-dollars.
func (r billingRecord) dollars() float64 { return math.Round(r.seconds*r.price/3600*1e6) / 1e6 }

func sumRecords(records []billingRecord) float64 {
	total := 0.0
	for _, r := range records {
		total += r.dollars()
	}
	return math.Round(total*1e6) / 1e6
}

// billingAmounts renders an amount the way the route's records carry it:
// everything is GPU time (the simulation bills no disk or CPU).
func billingAmounts(usd float64, serverless bool) map[string]any {
	m := map[string]any{"totalAmount": usd, "gpuAmount": usd, "cpuAmount": 0.0, "diskAmount": 0.0}
	if serverless {
		m["feeAmount"] = 0.0
	}
	return m
}

func billingBodies(records []billingRecord, idParam string, serverless bool) []map[string]any {
	out := make([]map[string]any, 0, len(records))
	for _, r := range records {
		m := billingAmounts(r.dollars(), serverless)
		m[idParam], m["startTime"], m["endTime"] = r.id, rfc3339(r.start), rfc3339(r.end)
		out = append(out, m)
	}
	return out
}
