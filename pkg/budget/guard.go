package budget

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/clock"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
)

// RunPod is what the guard reads: billing, and the live pods and endpoints.
type RunPod interface {
	PodBilling(ctx context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error)
	ServerlessBilling(ctx context.Context, q runpod.BillingQuery) ([]runpod.BillingRecord, error)
	ListPods(ctx context.Context, q runpod.ListPodsQuery) ([]runpod.Pod, error)
	ListEndpoints(ctx context.Context) ([]runpod.Endpoint, error)
}

// Bounds of what a live resource may still cost.
const (
	// ReaperBound is how long any pod of the suite can live: the reaper
	// reclaims pods active for more than two hours, every 15 minutes.
	ReaperBound = 2*time.Hour + 15*time.Minute
	// EndpointBound is how long a Serverless endpoint of the lane can live:
	// its cleanup deadline, then the reaper's 10-minute margin and interval.
	EndpointBound = ownership.ServerlessCleanupDeadline + 25*time.Minute
	// DefaultEndpointHourly is a Serverless worker's assumed price per hour:
	// the lane's default price ceiling.
	DefaultEndpointHourly = money.Rate(70 * money.Cent)
)

// CheckBudget bounds the reads of one check.
const CheckBudget = 30 * time.Second

// Guard is the Checker the lanes use.
type Guard struct {
	Limits spend.Limits
	RunPod RunPod
	// Record is the cost history's spend record, read when billing cannot
	// be; nil when the lane was given none.
	Record *Record
	// Repository is this lane's (owner/name); its own pods are bounded by
	// PodBound, other repositories' by ReaperBound.
	Repository string
	PodBound   time.Duration // startup_timeout_seconds + lifetime_seconds
	// EndpointHourly prices a live Serverless worker at least; 0 means
	// DefaultEndpointHourly. With Catalog a worker is priced at the
	// catalog's Serverless price of the dearest card of its endpoint's
	// pools (of any pool when the endpoint names none the catalog knows),
	// never below EndpointHourly: an H100 endpoint is not an A4000's.
	EndpointHourly money.Rate
	Catalog        Catalog
	Clock          clock.Clock // nil means the wall clock
	Logf           func(format string, args ...any)

	// billing is the first check's billing read, reused by the later checks
	// of the same UTC day (one read per provision run; see Check).
	billing *billingRead
	// seen are the live pods and endpoints earlier checks counted, each at
	// what it could still cost then.
	seen map[string]money.Amount
	// types is the catalog, read once when a live endpoint is first priced.
	types []runpod.GPUType
}

// Catalog reads the GPU catalog. *runpod.Client has it.
type Catalog interface {
	ListGPUTypes(ctx context.Context, q runpod.GPUQuery) ([]runpod.GPUType, error)
}

// billingRead is one read of the account's billing.
type billingRead struct {
	day          time.Time
	byID         map[string]money.Amount
	today, month money.Amount
}

func (g *Guard) now() time.Time { return clock.Now(g.Clock) }

func (g *Guard) logf(format string, args ...any) {
	if g.Logf != nil {
		g.Logf(format, args...)
	}
}

// Check reads what was spent and what is in flight and refuses c when its
// worst case would pass a limit. It fails (refusing c) when either cannot be
// known.
//
// Billing is read once per Guard (one provision run, whatever its tiers and
// candidates) and reused on the same UTC day: what billing shows only
// grows, so an old read says less was spent, and what it leaves out is
// counted in flight instead — a pod still live at its price for its whole
// bound less what the old read showed, a pod or endpoint an earlier check
// counted that is gone now at what it could still cost then, and the lane's
// own pods at their bound (spend.Create.OwnUSD). The live pods and endpoints are
// listed at every check.
func (g *Guard) Check(ctx context.Context, c spend.Create) (spend.Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, CheckBudget)
	defer cancel()
	now := g.now().UTC()
	u := spend.Usage{Limits: g.Limits, WorstCaseUSD: c.WorstCaseUSD, At: now}
	billed, err := g.spent(ctx, now, &u)
	if err != nil {
		return u, err
	}
	own := map[string]bool{}
	for _, id := range c.OwnPods {
		own[id] = true
	}
	if err := g.inFlight(ctx, now, billed, own, &u); err != nil {
		return u, fmt.Errorf("budget: what is in flight is unknown (%w); the %s create %s was not made", err, c.Lane, c.What)
	}
	g.addOwn(&u, c, billed)
	g.logf("budget: %s; this create's worst case %s", u, c.WorstCaseUSD)
	return u, spend.DecideBudget(u, c)
}

// spent fills today's and this month's spend, from billing when it can be
// read, else from the record. It returns what billing shows per resource
// this month (nil from the record), for the in-flight part.
func (g *Guard) spent(ctx context.Context, now time.Time, u *spend.Usage) (map[string]money.Amount, error) {
	day := now.Truncate(24 * time.Hour)
	if b := g.billing; b != nil && b.day.Equal(day) {
		u.SpentToday, u.SpentMonth, u.Source = b.today, b.month, SourceBilling
		return b.byID, nil
	}
	billed, today, month, err := readBilling(ctx, g.RunPod, now)
	if err == nil {
		g.billing = &billingRead{day: day, byID: billed, today: today, month: month}
		u.SpentToday, u.SpentMonth, u.Source = today, month, SourceBilling
		return billed, nil
	}
	if g.Record == nil {
		return nil, fmt.Errorf("budget: what was spent is unknown: RunPod billing unreadable (%v) and no spend record of the cost history was given; no create was made", err)
	}
	if ferr := g.Record.notFromTheFuture(now); ferr != nil {
		return nil, fmt.Errorf("budget: what was spent is unknown: RunPod billing unreadable (%v) and %w; no create was made", err, ferr)
	}
	today, month, note := g.Record.Spent(now)
	g.logf("budget: RunPod billing unreadable (%v): spend from the cost history's record (%s), a lower bound", err, note)
	u.SpentToday, u.SpentMonth = today, month
	u.Source = fmt.Sprintf("%s %s", SourceRecord, note)
	return nil, nil
}

// readBilling sums this month's pod and Serverless charges (UTC days) and
// today's, and what each pod or endpoint was charged.
func readBilling(ctx context.Context, rp RunPod, now time.Time) (byID map[string]money.Amount, today, month money.Amount, err error) {
	day := now.Truncate(24 * time.Hour)
	q := runpod.BillingQuery{Start: time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), End: day.AddDate(0, 0, 1), Bucket: runpod.BucketDay}
	byID = map[string]money.Amount{}
	for _, read := range []func(context.Context, runpod.BillingQuery) ([]runpod.BillingRecord, error){rp.PodBilling, rp.ServerlessBilling} {
		records, err := read(ctx, q)
		if err != nil {
			return nil, 0, 0, err
		}
		for _, r := range records {
			total := money.FromDollars(r.Total)
			month += total
			byID[r.ID] += total
			if !r.Start.Before(day) {
				today += total
			}
		}
	}
	return byID, today, month, nil
}

// inFlight adds every live pod and endpoint of the suite on the account at
// its price for what is left of its bound, less what billing shows for it,
// but the lane's own pods (addOwn counts them), and every one an earlier
// check counted that is gone now, at what it could still cost then: its
// last charges may not be in billing yet.
func (g *Guard) inFlight(ctx context.Context, now time.Time, billed map[string]money.Amount, own map[string]bool, u *spend.Usage) error {
	return g.inFlightOf(ctx, billed, own, u, func(runpod.Pod) bool { return true })
}

// inFlightOf is inFlight over the live pods counts keeps.
func (g *Guard) inFlightOf(ctx context.Context, billed map[string]money.Amount, own map[string]bool, u *spend.Usage, counts func(runpod.Pod) bool) error {
	pods, err := g.RunPod.ListPods(ctx, runpod.ListPodsQuery{})
	if err != nil {
		return err
	}
	endpoints, err := g.RunPod.ListEndpoints(ctx)
	if err != nil {
		return err
	}
	listed := map[string]money.Amount{}
	g.livePods(slices.DeleteFunc(pods, func(p runpod.Pod) bool { return !counts(p) }), billed, own, listed)
	if err := g.liveEndpoints(ctx, endpoints, billed, listed); err != nil {
		return err
	}
	for name, remaining := range g.seen {
		if _, still := listed[name]; !still && !own[strings.TrimPrefix(name, "pod ")] {
			g.add(u, name+" (gone since an earlier check)", remaining)
		}
	}
	if g.seen == nil {
		g.seen = map[string]money.Amount{}
	}
	for name, remaining := range listed {
		g.add(u, name, remaining)
		g.seen[name] = max(remaining, 0)
	}
	sort.Strings(u.InFlight)
	return nil
}

// livePods prices the suite's live pods but own into listed.
func (g *Guard) livePods(pods []runpod.Pod, billed map[string]money.Amount, own map[string]bool, listed map[string]money.Amount) {
	for _, p := range pods {
		tags, err := ownership.FromPod(p.Name, p.Env)
		if err != nil || p.Status.Ended() || !p.CreatedAt.Known() || own[p.ID] {
			continue // not the suite's, no longer billing for its GPU, or the lane's own
		}
		bound := ReaperBound
		if tags.Repository == g.Repository && g.PodBound > 0 {
			bound = g.PodBound
		}
		listed["pod "+p.ID] = spend.LiveBound(money.PerHour(float64(p.Cost)), bound, billed[p.ID])
	}
}

// liveEndpoints prices the suite's live Serverless endpoints into listed.
func (g *Guard) liveEndpoints(ctx context.Context, endpoints []runpod.Endpoint, billed map[string]money.Amount, listed map[string]money.Amount) error {
	for _, e := range endpoints {
		if !hasPrefix(e.Name, ownership.ServerlessNamePrefix) {
			continue
		}
		hourly, err := g.endpointHourly(ctx, e)
		if err != nil {
			return err
		}
		listed["endpoint "+e.ID] = spend.LiveBound(hourly*money.Rate(max(e.Workers.Max, 1)), EndpointBound, billed[e.ID])
	}
	return nil
}

// endpointHourly is what one worker of e can cost per hour (EndpointHourly).
func (g *Guard) endpointHourly(ctx context.Context, e runpod.Endpoint) (money.Rate, error) {
	floor := g.EndpointHourly
	if !(floor > 0) {
		floor = DefaultEndpointHourly
	}
	if g.Catalog == nil {
		return floor, nil
	}
	if g.types == nil {
		types, err := g.Catalog.ListGPUTypes(ctx, runpod.GPUQuery{})
		if err != nil {
			return 0, fmt.Errorf("the GPU catalog, which prices live Serverless endpoints: %w", err)
		}
		g.types = types
	}
	var pools []string
	if e.GPU != nil {
		pools = e.GPU.Pools
	}
	if price, ok := runpod.ServerlessPrice(g.types, pools...); ok {
		return max(price, floor), nil
	}
	var all []string
	for _, t := range g.types {
		all = append(all, t.Pool)
	}
	price, ok := runpod.ServerlessPrice(g.types, all...)
	if !ok {
		return 0, fmt.Errorf("the GPU catalog shows no Serverless price to bound endpoint %s by", e.ID)
	}
	return max(price, floor), nil
}

// addOwn counts the lane's own pods: what they can cost in all less what
// billing already shows for them (spend.Create.OwnUSD).
func (g *Guard) addOwn(u *spend.Usage, c spend.Create, billed map[string]money.Amount) {
	if c.OwnUSD <= 0 && len(c.OwnPods) == 0 {
		return
	}
	var shown money.Amount
	for _, id := range c.OwnPods {
		shown += billed[id]
	}
	u.InFlight = append(u.InFlight, fmt.Sprintf("this lane's %d pod(s)", len(c.OwnPods)))
	u.InFlightUSD += spend.OwnInFlight(c, shown)
}

// add counts one live resource's remaining worst case (never below 0).
func (g *Guard) add(u *spend.Usage, name string, remaining money.Amount) {
	u.InFlight = append(u.InFlight, name)
	u.InFlightUSD += max(remaining, 0)
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
