package serverless

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
)

// Management is the part of the RunPod management client the lane uses.
type Management interface {
	ListGPUTypes(context.Context, runpod.GPUQuery) ([]runpod.GPUType, error)
	CreateTemplate(context.Context, runpod.CreateTemplateRequest) (*runpod.Template, error)
	GetTemplate(context.Context, string) (*runpod.Template, error)
	ListTemplates(context.Context) ([]runpod.Template, error)
	DeleteTemplate(context.Context, string) error
	CreateEndpoint(context.Context, runpod.CreateEndpointRequest) (*runpod.Endpoint, error)
	GetEndpoint(context.Context, string) (*runpod.Endpoint, error)
	ListEndpoints(context.Context) ([]runpod.Endpoint, error)
	ScaleEndpoint(context.Context, string, runpod.EndpointWorkers) (*runpod.Endpoint, error)
	DeleteEndpoint(context.Context, string) error
}

// Jobs is the part of the job-host client the lane uses.
type Jobs interface {
	Health(context.Context, string) (*runpod.Health, error)
	Run(context.Context, string, any, runpod.JobPolicy) (*runpod.JobStatus, error)
	Status(context.Context, string, string) (*runpod.JobStatus, error)
	Cancel(context.Context, string, string) (*runpod.JobStatus, error)
}

// Bounds of single calls and of the cleanup.
const (
	CallTimeout    = 60 * time.Second
	CleanupTimeout = 4 * time.Minute
	DefaultPoll    = 10 * time.Second
	deleteAttempts = 5
	confirmRounds  = 3
	// createSends bounds how often one create is sent: again only after a
	// 429, and only once a lookup by its unique name found nothing.
	createSends = 3
)

// Lane runs the stages of one attempt against RunPod. Every outside call has
// its own deadline (reqpolicy.Bound on Policy's clock).
type Lane struct {
	Mgmt     Management
	Jobs     Jobs
	Policy   *reqpolicy.Policy
	Settings Settings
	Receipt  string // receipt file
	Ledger   LedgerFile
	Poll     time.Duration
	Logf     func(format string, args ...any)
	// Budget is the repository's daily and monthly budget, shared with the
	// pod lane and checked before the first create (budget.go); nil means
	// none is configured. BudgetUsage is what its check saw.
	Budget      budget.Checker
	BudgetUsage *spend.Usage
}

func (l *Lane) logf(format string, args ...any) {
	if l.Logf != nil {
		l.Logf(format, args...)
	}
}

func (l *Lane) now() time.Time { return l.Policy.Now() }

func (l *Lane) bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return reqpolicy.Bound(ctx, l.Policy, d)
}

// ErrSettingsMismatch is returned when RunPod answered other settings than asked for.
var ErrSettingsMismatch = errors.New("returned settings differ from the request")

// ErrUnresolved is returned while a create's outcome is unknown.
var ErrUnresolved = errors.New("a create's outcome is unresolved")

// Health is read-only as long as everything holds: the receipt is resolved,
// the template and endpoint still show every setting setup asked for, the
// key authenticates on the job host, and the endpoint has had no work. An
// endpoint whose settings drifted is refused, naming each setting, and
// removed with its template: no job may run on it.
func (l *Lane) Health(ctx context.Context) (*Receipt, error) {
	r, err := LoadReceipt(l.Receipt)
	if err != nil {
		return nil, err
	}
	return r, l.health(ctx, r, true)
}

// health checks r as Health does; quiet asks for an endpoint with no work
// yet (false when the attempt's own job is being followed).
func (l *Lane) health(ctx context.Context, r *Receipt, quiet bool) error {
	switch {
	case r.Unresolved():
		return fmt.Errorf("health: %w: run cleanup first; no job may be submitted", ErrUnresolved)
	case r.Endpoint.State != StateCreated || r.Template.State != StateCreated:
		return fmt.Errorf("health: the receipt has no live endpoint and template (endpoint %q, template %q): run setup with a new receipt", r.Endpoint.State, r.Template.State)
	}
	if err := l.verifyLive(ctx, r); err != nil {
		return l.removeOnMismatch(ctx, "health", err)
	}
	cctx, cancel := l.bound(ctx, CallTimeout)
	defer cancel()
	h, err := l.Jobs.Health(cctx, r.Endpoint.ID)
	switch {
	case errors.Is(err, runpod.ErrUnauthorized):
		return fmt.Errorf("health: the API key does not authenticate on the job host (%w); allow its binding to reach the job host", err)
	case err != nil:
		return fmt.Errorf("health: %w", err)
	case quiet && !h.Quiet():
		return fmt.Errorf("health: endpoint %s already has work (queued %d, running %d, completed %d, failed %d): it is not this attempt's fresh endpoint",
			r.Endpoint.ID, h.Jobs.InQueue, h.Jobs.InProgress, h.Jobs.Completed, h.Jobs.Failed)
	}
	l.logf("health: job host authenticated; endpoint %s has no work; settings verified", r.Endpoint.ID)
	return nil
}

// removeOnMismatch deletes the attempt's endpoint and template when err says
// their settings drifted, and returns err with what the removal did.
func (l *Lane) removeOnMismatch(ctx context.Context, stage string, err error) error {
	if !errors.Is(err, ErrSettingsMismatch) {
		return fmt.Errorf("%s: %w", stage, err)
	}
	l.logf("%s: %v; removing the endpoint and template", stage, err)
	if _, cerr := l.Cleanup(ctx); cerr != nil {
		return fmt.Errorf("%s: %w; removing them: %v", stage, err, cerr)
	}
	return fmt.Errorf("%s: %w (the endpoint and template were removed, deletion confirmed)", stage, err)
}
