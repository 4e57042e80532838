package serverless

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// SetupRequest names an attempt and carries the template's public settings.
type SetupRequest struct {
	Attempt    string
	Repository string
	RunID      int64
	RunAttempt int
	Args       string            // the template's start command (the bootstrap)
	Env        map[string]string // public values only: never the API key
}

// Setup creates the receipt (never over an existing one), opens the attempt
// in the ledger (one attempt at a time; the setup and the job stage must both
// fit, and only setup's is reserved), then creates the private template and
// the endpoint, recording the intent before each create and the id after.
// Before any of that it reads the GPU catalog (to exclude the pool's other
// cards) and lists the account's Serverless resources: a live earlier
// attempt of the same repository refuses the new one, by name. A create is
// never re-sent blindly: a lost answer is reconciled by the unique name, and
// after a 429 the name is looked up before the create is sent again. Every
// returned setting is verified; a mismatch deletes what was created and fails.
func (l *Lane) Setup(ctx context.Context, req SetupRequest) (*Receipt, error) {
	if err := l.Settings.Validate(); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(req.Attempt, ownership.ServerlessNamePrefix) {
		return nil, fmt.Errorf("attempt name %q: want the %s prefix (ownership.ServerlessAttemptName)", req.Attempt, ownership.ServerlessNamePrefix)
	}
	excluded, err := l.gpuExclusions(ctx)
	if err != nil {
		return nil, fmt.Errorf("setup (nothing created): %w", err)
	}
	listed, err := l.listedAttempts(ctx, req.Repository, req.Attempt)
	if err != nil {
		return nil, fmt.Errorf("setup (nothing created): %w", err)
	}
	if err := l.checkBudget(ctx, req.Attempt); err != nil {
		return nil, err
	}
	r, err := l.begin(req, excluded, listed)
	if err != nil {
		return r, err
	}
	tpl, err := l.createTemplate(ctx, r)
	if err != nil {
		return l.failSetup(ctx, r, err)
	}
	l.logf("setup: template %s (%s) created", tpl, r.Template.Name)

	// The endpoint, then a fresh read of both: every answer is verified.
	ep, err := l.createEndpoint(ctx, r, tpl)
	if err == nil {
		err = l.verifyLive(ctx, r)
	}
	if err != nil {
		return l.failSetup(ctx, r, err)
	}
	l.logf("setup: endpoint %s (%s) created: workers %d–%d of %s only (pool %s, %d other cards excluded), idle %s, timeout %s",
		ep, r.Endpoint.Name, WorkersMin, WorkersMax, l.Settings.GPUType, l.Settings.GPUPool, len(excluded), l.Settings.IdleTimeout, l.Settings.ExecutionTimeout)
	return r, SaveReceipt(l.Receipt, r)
}

// begin writes the attempt's receipt and opens it in the ledger, reserving
// the setup stage once the job's reservation is known to fit as well. A
// refusal leaves a receipt that says nothing was created.
func (l *Lane) begin(req SetupRequest, excluded []string, listed map[string]bool) (*Receipt, error) {
	for name := range listed {
		return nil, fmt.Errorf("setup (nothing created): %w: attempt %s of %s still has a template or endpoint: run cleanup with its receipt, or wait for the reaper; one attempt at a time",
			ErrAttemptOpen, name, req.Repository)
	}
	now := l.now()
	r := &Receipt{Version: ReceiptVersion, Attempt: req.Attempt, Repository: req.Repository, RunID: req.RunID, RunAttempt: req.RunAttempt,
		CreatedAt: now, Deadline: now.Add(l.Settings.CleanupDeadline), Ledger: absPath(l.Ledger.Path),
		Template: Resource{Name: req.Attempt + "-tpl"}, Endpoint: Resource{Name: req.Attempt}}
	r.Asked = &Asked{Template: l.Settings.TemplateRequest(r.Template.Name, req.Args, req.Env),
		Endpoint: l.Settings.EndpointRequest(r.Endpoint.Name, "", excluded), GPUType: l.Settings.GPUType, PricePerHour: l.Settings.PriceCeiling}
	if err := CreateReceipt(l.Receipt, r); err != nil {
		return nil, err
	}
	setup := Reservation{Stage: StageSetup, Attempt: r.Attempt, Cents: l.Settings.SetupReservation().CentsUp(), At: now,
		Basis: fmt.Sprintf("(%s lifetime + %s reserve) at %s + $1", l.Settings.Lifetime, l.Settings.Reserve, l.Settings.PriceCeiling.Format(money.Cents))}
	_, err := l.Ledger.Begin(AttemptStart{
		Entry: AttemptEntry{Name: r.Attempt, Receipt: absPath(l.Receipt), OpenedAt: now, Deadline: r.Deadline},
		Setup: setup, Later: []Reservation{l.jobReservation(r.Attempt, now)}, Now: now,
		Listed: func(attempt string) bool { return listed[attempt] }})
	if err != nil {
		r.CleanupConfirmed = true // nothing was created
		r.Notes = append(r.Notes, "setup refused before any create: "+err.Error())
		_ = SaveReceipt(l.Receipt, r)
		return r, fmt.Errorf("setup (nothing created): %w", err)
	}
	l.logf("setup: reserved %s in %s (the job's %s fits too); cleanup deadline %s",
		l.Ledger.Caps.Stage(setup.Cents.Amount()), l.Ledger.Path, l.Ledger.Caps.Stage(l.Settings.JobReservation()), r.Deadline.Format(time.RFC3339))
	return r, nil
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// jobReservation is the job stage's reservation of attempt at now.
func (l *Lane) jobReservation(attempt string, now time.Time) Reservation {
	return Reservation{Stage: StageJob, Attempt: attempt, Cents: l.Settings.JobReservation().CentsUp(), At: now,
		Basis: fmt.Sprintf("job TTL %s at %s + $1", l.Settings.JobTTL, l.Settings.PriceCeiling.Format(money.Cents))}
}

// gpuExclusions reads the GPU catalog and returns the cards of the pool
// other than the one asked for: the endpoint excludes them. From the same
// read it prices the pool (PoolPrice): every reservation, the budget's
// worst case and the estimate use that price from here on.
func (l *Lane) gpuExclusions(ctx context.Context) ([]string, error) {
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	types, err := l.Mgmt.ListGPUTypes(cctx, runpod.GPUQuery{})
	if err != nil {
		return nil, fmt.Errorf("read the GPU catalog to exclude the pool's other cards: %w", err)
	}
	excluded, err := GPUExclusions(types, l.Settings.GPUPool, l.Settings.GPUType)
	if err != nil {
		return nil, err
	}
	price, err := PoolPrice(types, l.Settings.GPUPool, l.Settings.GPUType, l.Settings.PriceCeiling)
	if err != nil {
		return nil, err
	}
	l.Settings.PriceCeiling = price
	l.logf("setup: pool %s priced at %s (the catalog's Serverless price of its dearest card, at least the lane's floor): reservations and estimates use it", l.Settings.GPUPool, price.Format(money.Cents))
	return excluded, nil
}

// GPUExclusions returns the GPU types of pool other than want, sorted: the
// endpoint's gpu.excludedTypes, so that "one A4000" is an A4000 and not any
// card of its pool. want must be in the pool.
func GPUExclusions(types []runpod.GPUType, pool, want string) ([]string, error) {
	var members, others []string
	for _, t := range types {
		if t.Pool != pool {
			continue
		}
		members = append(members, t.ID)
		if t.ID != want {
			others = append(others, t.ID)
		}
	}
	if !slices.Contains(members, want) {
		return nil, fmt.Errorf("GPU type %q is not in Serverless pool %s (its cards: %s)", want, pool, listOrNone(members))
	}
	slices.Sort(others)
	return slices.Compact(others), nil
}

// listedAttempts lists the account's templates and endpoints and returns the
// attempts of repository other than self that still have one.
func (l *Lane) listedAttempts(ctx context.Context, repository, self string) (map[string]bool, error) {
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	eps, err1 := l.Mgmt.ListEndpoints(cctx)
	tpls, err2 := l.Mgmt.ListTemplates(cctx)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("list the Serverless resources to find earlier attempts still alive: %w", err)
	}
	names := make([]string, 0, len(eps)+len(tpls))
	for _, e := range eps {
		names = append(names, e.Name)
	}
	for _, t := range tpls {
		names = append(names, t.Name)
	}
	out := map[string]bool{}
	for _, n := range names {
		if attempt, _, _, _, ok := ownership.ParseServerlessName(repository, n); ok && attempt != self {
			out[attempt] = true
		}
	}
	return out, nil
}

// createTemplate creates the attempt's template once (see createOnce) and
// verifies the answer against the request.
func (l *Lane) createTemplate(ctx context.Context, r *Receipt) (string, error) {
	asked := r.Asked.Template
	return createOnce(ctx, l, r, &r.Template, func(ctx context.Context) (string, error) {
		t, err := l.Mgmt.CreateTemplate(ctx, asked)
		if err != nil {
			return "", err
		}
		if bad := VerifyTemplate(t, asked); len(bad) > 0 {
			return t.ID, fmt.Errorf("%w: %s", ErrSettingsMismatch, strings.Join(bad, "; "))
		}
		return t.ID, nil
	}, l.findTemplate)
}

// createEndpoint creates the attempt's endpoint on template tpl once (see
// createOnce) and verifies the answer against the request.
func (l *Lane) createEndpoint(ctx context.Context, r *Receipt, tpl string) (string, error) {
	r.Asked.Endpoint.TemplateID = tpl
	asked := r.Asked.Endpoint
	return createOnce(ctx, l, r, &r.Endpoint, func(ctx context.Context) (string, error) {
		e, err := l.Mgmt.CreateEndpoint(ctx, asked)
		if err != nil {
			return "", err
		}
		if bad := VerifyEndpoint(e, asked, r.Asked.Template); len(bad) > 0 {
			return e.ID, fmt.Errorf("%w: %s", ErrSettingsMismatch, strings.Join(bad, "; "))
		}
		return e.ID, nil
	}, l.findEndpoint)
}

// failSetup deletes what setup created and returns the receipt as cleanup
// left it and the setup error (with the cleanup's, if it could not confirm).
func (l *Lane) failSetup(ctx context.Context, r *Receipt, err error) (*Receipt, error) {
	if saveErr := SaveReceipt(l.Receipt, r); saveErr != nil {
		return r, errors.Join(err, saveErr)
	}
	l.logf("setup failed (%v); deleting what it created", err)
	res, cerr := l.Cleanup(ctx)
	if res != nil && res.Receipt != nil {
		r = res.Receipt
	}
	if cerr != nil {
		return r, fmt.Errorf("setup: %w; cleanup: %v", err, cerr)
	}
	return r, fmt.Errorf("setup: %w (what it created was deleted and the deletion confirmed)", err)
}

// uncertain reports whether a create error leaves the resource's existence
// unknown. A wait that did not fit the deadline is not among them: with one
// attempt allowed, the only wait is before the request goes out.
func uncertain(err error) bool {
	return errors.Is(err, runpod.ErrTransport) || errors.Is(err, runpod.ErrServer) ||
		errors.Is(err, runpod.ErrMalformedResponse) || errors.Is(err, runpod.ErrUnusableRecord) ||
		errors.Is(err, runpod.ErrRateLimited) || errors.Is(err, context.DeadlineExceeded)
}

// createOnce records the intent and sends the create, with one wire attempt
// each time: the policy never repeats it. After a 429 the unique name is
// looked up before the create is sent again (at most createSends times); an
// answer otherwise unclear is reconciled by name, and an unseen name stays
// unresolved. The id is recorded either way.
func createOnce(ctx context.Context, l *Lane, r *Receipt, res *Resource, create func(context.Context) (string, error), find func(context.Context, string) (string, error)) (string, error) {
	res.State, res.IntentAt = StateIntent, l.now()
	if err := SaveReceipt(l.Receipt, r); err != nil {
		return "", err
	}
	var id string
	var err error
	for send := 1; ; send++ {
		cctx, cancel := l.bound(reqpolicy.WithAttemptLimit(ctx, 1), CallTimeout)
		id, err = create(cctx)
		cancel()
		if id != "" || !errors.Is(err, runpod.ErrRateLimited) || send == createSends {
			break
		}
		l.logf("create of %s: %v; looking the name up before sending it again", res.Name, err)
		found, ferr := find(ctx, res.Name)
		if ferr != nil || found != "" {
			return l.reconciled(ctx, r, res, err, found, ferr)
		}
		l.logf("create of %s: the name is not listed; sending the create again (%d/%d)", res.Name, send+1, createSends)
	}
	switch {
	case id != "":
		res.State, res.ID = StateCreated, id
	case err != nil && uncertain(err):
		l.logf("create of %s: %v; reconciling by name (the create is never sent again)", res.Name, err)
		found, ferr := find(ctx, res.Name)
		return l.reconciled(ctx, r, res, err, found, ferr)
	case err != nil:
		res.State, res.Detail = "", "create refused: "+err.Error() // a definite refusal created nothing
	}
	if serr := SaveReceipt(l.Receipt, r); serr != nil && err == nil {
		err = serr
	}
	return id, err
}

// reconciled records what a lookup by name found after an unclear create
// answer: the resource (verified), nothing (unresolved), or no answer.
func (l *Lane) reconciled(ctx context.Context, r *Receipt, res *Resource, createErr error, found string, findErr error) (string, error) {
	switch {
	case findErr != nil:
		res.State, res.Detail = StateUnresolved, fmt.Sprintf("create answer unclear (%v) and the listing failed (%v)", createErr, findErr)
		return "", fmt.Errorf("%w: %s: %s", ErrUnresolved, res.Name, res.Detail)
	case found == "":
		res.State, res.Detail = StateUnresolved, fmt.Sprintf("create answer unclear (%v) and the name is not listed (yet)", createErr)
		return "", fmt.Errorf("%w: %s: %s", ErrUnresolved, res.Name, res.Detail)
	}
	res.State, res.ID, res.Detail = StateCreated, found, "reconciled by name after a lost create answer"
	l.logf("create of %s: found %s by name", res.Name, found)
	if err := SaveReceipt(l.Receipt, r); err != nil {
		return found, err
	}
	return found, l.verifyOne(ctx, r, res)
}

// asked is what setup asked for: the receipt's record, or for a receipt
// written before it kept one, the current settings.
func (l *Lane) asked(r *Receipt) Asked {
	if r.Asked != nil {
		return *r.Asked
	}
	return Asked{Template: l.Settings.TemplateRequest(r.Template.Name, "", nil), Endpoint: l.Settings.EndpointRequest(r.Endpoint.Name, "", nil), GPUType: l.Settings.GPUType}
}

// verifyOne reads a resource and checks every setting setup asked for.
func (l *Lane) verifyOne(ctx context.Context, r *Receipt, res *Resource) error {
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	asked := l.asked(r)
	var bad []string
	if res == &r.Template {
		t, err := l.Mgmt.GetTemplate(cctx, res.ID)
		if err != nil {
			return err
		}
		if r.Asked == nil { // an old receipt did not record the args and env
			asked.Template.Args, asked.Template.Env = t.Args, nil
		}
		bad = VerifyTemplate(t, asked.Template)
	} else {
		e, err := l.Mgmt.GetEndpoint(cctx, res.ID)
		if err != nil {
			return err
		}
		bad = VerifyEndpoint(e, asked.Endpoint, asked.Template)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: %s", ErrSettingsMismatch, strings.Join(bad, "; "))
	}
	return nil
}

// verifyLive re-reads both resources and verifies them.
func (l *Lane) verifyLive(ctx context.Context, r *Receipt) error {
	if err := l.verifyOne(ctx, r, &r.Template); err != nil {
		return err
	}
	return l.verifyOne(ctx, r, &r.Endpoint)
}

// findTemplate lists the templates, at once (a lost create's lookup must not
// wait out a long Retry-After), and returns the id of the one named name.
func (l *Lane) findTemplate(ctx context.Context, name string) (string, error) {
	return findByName(ctx, l, l.Mgmt.ListTemplates, name, func(t runpod.Template) (string, string) { return t.Name, t.ID })
}

// findEndpoint is findTemplate for endpoints.
func (l *Lane) findEndpoint(ctx context.Context, name string) (string, error) {
	return findByName(ctx, l, l.Mgmt.ListEndpoints, name, func(e runpod.Endpoint) (string, string) { return e.Name, e.ID })
}

// findByName lists with list, at once, and returns the id of the record named
// name ("" when none is); nameID gives a record's name and id.
func findByName[T any](ctx context.Context, l *Lane, list func(context.Context) ([]T, error), name string, nameID func(T) (string, string)) (string, error) {
	cctx, cancel := l.bound(reqpolicy.Urgent(ctx), CallTimeout)
	defer cancel()
	records, err := list(cctx)
	if err != nil {
		return "", err
	}
	for _, r := range records {
		if n, id := nameID(r); n == name {
			return id, nil
		}
	}
	return "", nil
}
