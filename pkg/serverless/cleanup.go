package serverless

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
)

// CleanupResult says what cleanup confirmed.
type CleanupResult struct {
	Confirmed bool
	Receipt   *Receipt
}

// Every request of a cleanup goes out at once, whatever cooldown an earlier
// answer set (reqpolicy.Urgent): a read, a delete or a confirming listing
// costs nothing, and waiting an hour's Retry-After costs money.

// Cleanup deletes only the receipt's endpoint and template, after checking
// each still carries the recorded name, scales the endpoint down first,
// retries deletes within bounds, and confirms through fresh listings. A
// create whose outcome is unknown is reconciled by name; still unseen, it
// stays unresolved and cleanup is not confirmed.
func (l *Lane) Cleanup(ctx context.Context) (*CleanupResult, error) {
	r, err := LoadReceipt(l.Receipt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := l.bound(ctx, CleanupTimeout)
	defer cancel()
	problems := l.resolveByName(ctx, r)
	if r.Endpoint.ID != "" && r.Endpoint.State == StateCreated {
		if err := l.deleteEndpoint(ctx, r); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if r.Template.ID != "" && r.Template.State == StateCreated {
		if err := l.deleteTemplate(ctx, r); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if err := l.confirm(ctx, r); err != nil {
		problems = append(problems, err.Error())
	}
	r.CleanupConfirmed = len(problems) == 0 && !r.Template.Pending() && !r.Endpoint.Pending()
	if r.CleanupConfirmed {
		r.Notes = append(r.Notes, "cleanup confirmed at "+l.now().UTC().Format(time.RFC3339))
	}
	if err := SaveReceipt(l.Receipt, r); err != nil {
		problems = append(problems, err.Error())
	}
	if !r.CleanupConfirmed {
		return &CleanupResult{Receipt: r}, fmt.Errorf("cleanup not confirmed: %s", strings.Join(problems, "; "))
	}
	if r.Created() {
		l.logf("cleanup: endpoint %q and template %q deleted and confirmed absent", r.Endpoint.ID, r.Template.ID)
	} else {
		l.logf("cleanup: the attempt created nothing; fresh listings confirm none of its names")
	}
	if err := l.closeAttempt(r); err != nil {
		return &CleanupResult{Confirmed: true, Receipt: r}, fmt.Errorf("cleanup confirmed, but the ledger could not record it: %w", err)
	}
	return &CleanupResult{Confirmed: true, Receipt: r}, nil
}

// closeAttempt records the confirmed cleanup in the ledger the attempt began
// in (the receipt names it), so that the next attempt may begin. A ledger
// file that does not exist (moved away, or never written) has nothing to close.
func (l *Lane) closeAttempt(r *Receipt) error {
	path := r.Ledger
	if path == "" {
		path = l.Ledger.Path
	}
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	f := l.Ledger
	f.Path = path
	if f.Caps == (spend.LedgerCaps{}) {
		f.Caps = spend.DefaultLedgerCaps
	}
	return f.Close(r.Attempt, l.now(), "cleanup confirmed")
}

// resolveByName looks up, by their unique names, the resources whose create
// answer was lost, and returns what stays unresolved.
func (l *Lane) resolveByName(ctx context.Context, r *Receipt) []string {
	var problems []string
	for _, res := range []*Resource{&r.Endpoint, &r.Template} {
		if res.ID != "" || (res.State != StateIntent && res.State != StateUnresolved) {
			continue
		}
		find := l.findEndpoint
		if res == &r.Template {
			find = l.findTemplate
		}
		id, ferr := find(ctx, res.Name)
		switch {
		case ferr != nil:
			res.State = StateUnresolved
			problems = append(problems, fmt.Sprintf("%s: listing failed: %v", res.Name, ferr))
		case id == "":
			res.State = StateUnresolved
			problems = append(problems, fmt.Sprintf("%s: its create's outcome is unknown and the name is not listed; repeat cleanup later", res.Name))
		default:
			res.ID, res.State, res.Detail = id, StateCreated, "reconciled by name during cleanup"
		}
	}
	return problems
}

func (l *Lane) deleteEndpoint(ctx context.Context, r *Receipt) error {
	id := r.Endpoint.ID
	e, err := readBeforeDelete(ctx, l, "endpoint "+id, func(ctx context.Context) (*runpod.Endpoint, error) { return l.Mgmt.GetEndpoint(ctx, id) })
	switch {
	case e == nil:
		return err // nil when gone: the listing confirms
	case e.Name != r.Endpoint.Name:
		return fmt.Errorf("endpoint %s is named %q, not the recorded %q: not ours, left alone", id, e.Name, r.Endpoint.Name)
	}
	cctx, cancel := l.bound(reqpolicy.Urgent(ctx), CallTimeout)
	if _, err := l.Mgmt.ScaleEndpoint(cctx, id, runpod.EndpointWorkers{Min: 0, Max: 0}); err != nil && !errors.Is(err, runpod.ErrNotFound) {
		l.logf("cleanup: scale endpoint %s to 0: %v (deleting anyway)", id, err)
	}
	cancel()
	return l.deleteBounded(ctx, "endpoint "+id, func(ctx context.Context) error { return l.Mgmt.DeleteEndpoint(ctx, id) })
}

func (l *Lane) deleteTemplate(ctx context.Context, r *Receipt) error {
	id := r.Template.ID
	t, err := readBeforeDelete(ctx, l, "template "+id, func(ctx context.Context) (*runpod.Template, error) { return l.Mgmt.GetTemplate(ctx, id) })
	switch {
	case t == nil:
		return err // nil when gone
	case t.Name != r.Template.Name || t.Public:
		return fmt.Errorf("template %s is named %q (public %t), not the recorded private %q: not ours, left alone", id, t.Name, t.Public, r.Template.Name)
	}
	return l.deleteBounded(ctx, "template "+id, func(ctx context.Context) error { return l.Mgmt.DeleteTemplate(ctx, id) })
}

// readBeforeDelete reads what (kind and id) within CallTimeout before its
// deletion: nil and no error when it is gone already, nil and the error when
// it cannot be read.
func readBeforeDelete[T any](ctx context.Context, l *Lane, what string, get func(context.Context) (*T, error)) (*T, error) {
	cctx, cancel := l.bound(reqpolicy.Urgent(ctx), CallTimeout)
	defer cancel()
	v, err := get(cctx)
	switch {
	case errors.Is(err, runpod.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: read before delete: %v", what, err)
	}
	return v, nil
}

// deleteBounded sends an idempotent delete at most deleteAttempts times;
// not found counts as deleted.
func (l *Lane) deleteBounded(ctx context.Context, what string, del func(context.Context) error) error {
	var last error
	for attempt := 1; attempt <= deleteAttempts; attempt++ {
		cctx, cancel := l.bound(reqpolicy.Urgent(reqpolicy.WithAttemptLimit(ctx, 1)), CallTimeout)
		err := del(cctx)
		cancel()
		if err == nil || errors.Is(err, runpod.ErrNotFound) {
			return nil
		}
		last = err
		l.logf("cleanup: delete %s (attempt %d/%d): %v", what, attempt, deleteAttempts, err)
		if attempt < deleteAttempts {
			if werr := l.Policy.Wait(ctx, time.Duration(attempt)*2*time.Second, "delete retry"); werr != nil {
				break
			}
		}
	}
	return fmt.Errorf("delete %s: %v", what, last)
}

// confirm lists endpoints and templates afresh and marks what is absent as deleted.
func (l *Lane) confirm(ctx context.Context, r *Receipt) error {
	var last error
	for round := 1; round <= confirmRounds; round++ {
		cctx, cancel := l.bound(reqpolicy.Urgent(ctx), CallTimeout)
		eps, err1 := l.Mgmt.ListEndpoints(cctx)
		tpls, err2 := l.Mgmt.ListTemplates(cctx)
		cancel()
		if err := errors.Join(err1, err2); err != nil {
			last = err
			continue
		}
		epLeft, tplLeft := false, false
		for _, e := range eps {
			epLeft = epLeft || (r.Endpoint.ID != "" && e.ID == r.Endpoint.ID) || e.Name == r.Endpoint.Name
		}
		for _, t := range tpls {
			tplLeft = tplLeft || (r.Template.ID != "" && t.ID == r.Template.ID) || t.Name == r.Template.Name
		}
		if !epLeft && r.Endpoint.State != StateUnresolved && r.Endpoint.State != "" {
			r.Endpoint.State = StateDeleted
		}
		if !tplLeft && r.Template.State != StateUnresolved && r.Template.State != "" {
			r.Template.State = StateDeleted
		}
		if !epLeft && !tplLeft {
			return nil
		}
		last = fmt.Errorf("still listed after deletion: endpoint %t, template %t", epLeft, tplLeft)
		if err := l.Policy.Wait(ctx, 2*time.Second, "cleanup confirmation"); err != nil {
			break
		}
	}
	return fmt.Errorf("confirmation: %v", last)
}
