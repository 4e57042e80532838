package runpod

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Template is a RunPod template as GET /v2/templates/{id} shows it. Env may
// hold values a caller considers private; String leaves it out.
type Template struct {
	ID                  string            `json:"id"`
	Name                string            `json:"name"`
	Image               string            `json:"image"`
	Args                string            `json:"args"`
	Disk                int               `json:"disk"` // container disk, GB
	Mounts              *Mounts           `json:"mounts,omitempty"`
	Ports               []string          `json:"ports"`
	Env                 map[string]string `json:"env"`
	Registry            *string           `json:"registry"`
	Serverless          bool              `json:"serverless"`
	Public              bool              `json:"public"`
	Category            string            `json:"category"`
	StartSSH            bool              `json:"startSsh"`
	StartJupyter        bool              `json:"startJupyter"`
	AllowedCudaVersions []string          `json:"allowedCudaVersions"`
}

// String summarises the template without its environment.
func (t Template) String() string {
	return fmt.Sprintf("template %s (%s) image %s, disk %d GB, serverless %t, public %t", t.ID, t.Name, t.Image, t.Disk, t.Serverless, t.Public)
}

// CreateTemplateRequest is the body of POST /v2/templates. Booleans are sent
// explicitly: the API defaults startSsh and startJupyter to true.
type CreateTemplateRequest struct {
	Name         string            `json:"name"`
	Image        string            `json:"image"`
	Args         string            `json:"args,omitempty"`
	Disk         int               `json:"disk,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Ports        []string          `json:"ports"`
	Serverless   bool              `json:"serverless"`
	Public       bool              `json:"public"`
	StartSSH     bool              `json:"startSsh"`
	StartJupyter bool              `json:"startJupyter"`
	Category     string            `json:"category,omitempty"`
}

// Endpoint is a Serverless endpoint as GET /v2/serverless/{id} shows it.
type Endpoint struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Type           string            `json:"type"`
	Image          string            `json:"image"`
	Disk           int               `json:"disk"`
	Env            map[string]string `json:"env"`
	GPU            *EndpointGPU      `json:"gpu"`
	Workers        EndpointWorkers   `json:"workers"`
	Scaling        EndpointScaling   `json:"scaling"`
	DataCenterIDs  []string          `json:"dataCenterIds"`
	NetworkVolumes []string          `json:"networkVolumes"`
	Timeout        int64             `json:"timeout"` // per-request execution timeout, ms
	Flashboot      string            `json:"flashboot"`
	CreatedAt      wire.Time         `json:"createdAt"`
}

// String summarises the endpoint without its environment.
func (e Endpoint) String() string {
	idle := "unset"
	if e.Workers.IdleTimeout != nil {
		idle = strconv.Itoa(*e.Workers.IdleTimeout) + " s"
	}
	pools := "none"
	if e.GPU != nil {
		pools = strings.Join(e.GPU.Pools, ",")
	}
	return fmt.Sprintf("endpoint %s (%s) workers %d–%d, idle %s, timeout %d ms, pools %s", e.ID, e.Name, e.Workers.Min, e.Workers.Max, idle, e.Timeout, pools)
}

// EndpointGPU is an endpoint's GPU selection.
type EndpointGPU struct {
	Pools               []string `json:"pools"`
	ExcludedTypes       []string `json:"excludedTypes,omitempty"`
	Count               int      `json:"count,omitempty"`
	AllowedCudaVersions []string `json:"allowedCudaVersions,omitempty"`
	MinCudaVersion      *string  `json:"minCudaVersion,omitempty"`
}

// EndpointWorkers are an endpoint's worker bounds. Min and Max are always
// sent, 0 included: an omitted max becomes the API's default of 3.
type EndpointWorkers struct {
	Min         int  `json:"min"`
	Max         int  `json:"max"`
	IdleTimeout *int `json:"idleTimeout,omitempty"` // seconds
}

// EndpointScaling is the autoscaling signal.
type EndpointScaling struct {
	Type         string   `json:"type"`
	QueueDelay   *float64 `json:"queueDelay,omitempty"`
	RequestCount *int     `json:"requestCount,omitempty"`
}

// CreateEndpointRequest is the body of POST /v2/serverless.
type CreateEndpointRequest struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"` // QUEUE
	TemplateID string          `json:"templateId"`
	GPU        *EndpointGPU    `json:"gpu"`
	Workers    EndpointWorkers `json:"workers"`
	Scaling    EndpointScaling `json:"scaling"`
	Timeout    int64           `json:"timeout"` // ms
	Flashboot  string          `json:"flashboot,omitempty"`
	// DataCenterIDs pins the workers' data centers; empty lets the scheduler choose.
	DataCenterIDs []string `json:"dataCenterIds,omitempty"`
}

// UpdateEndpointWorkers is the body of a PATCH that changes only the worker bounds.
type UpdateEndpointWorkers struct {
	Workers EndpointWorkers `json:"workers"`
}

func checkID(op, what, id string) error {
	if strings.TrimSpace(id) == "" || strings.ContainsAny(id, "/?#") {
		return invalidArgument(op, "%s id %q: want a non-empty id without / ? #", what, id)
	}
	return nil
}

// getByID reads the kind's record id (GET path/id).
func getByID[T any](ctx context.Context, c *Client, kind, path, id string, idOf func(*T) string) (*T, error) {
	op := "get " + kind + " " + id
	if err := checkID(op, kind, id); err != nil {
		return nil, err
	}
	return getRecord(ctx, c, call{op: op, method: http.MethodGet, path: path + "/" + url.PathEscape(id)}, kind, id, idOf)
}

// deleteByID deletes the kind's record id (DELETE path/id).
func (c *Client) deleteByID(ctx context.Context, kind, path, id string) error {
	op := "delete " + kind + " " + id
	if err := checkID(op, kind, id); err != nil {
		return err
	}
	_, _, err := c.send(ctx, call{op: op, method: http.MethodDelete, path: path + "/" + url.PathEscape(id)})
	return err
}

// CreateTemplate creates one template (POST /v2/templates), sent again only
// after a 429 (which created nothing): on ErrTransport or ErrServer it may
// exist anyway, so reconcile by its name.
func (c *Client) CreateTemplate(ctx context.Context, r CreateTemplateRequest) (*Template, error) {
	op := "create template " + strconv.Quote(r.Name)
	switch {
	case strings.TrimSpace(r.Name) == "":
		return nil, invalidArgument(op, "name is empty")
	case strings.TrimSpace(r.Image) == "":
		return nil, invalidArgument(op, "image is empty")
	}
	return createRecord(ctx, c, call{op: op, method: http.MethodPost, path: "/v2/templates", body: r}, "template", r.Name,
		func(t *Template) (string, string) { return t.ID, t.Name })
}

// GetTemplate reads one template.
func (c *Client) GetTemplate(ctx context.Context, id string) (*Template, error) {
	return getByID(ctx, c, "template", "/v2/templates", id, func(t *Template) string { return t.ID })
}

// ListTemplates lists the account's templates (one page: v2 does not paginate them).
func (c *Client) ListTemplates(ctx context.Context) ([]Template, error) {
	var out struct {
		Templates *[]Template `json:"templates"`
	}
	cl := call{op: "list templates", method: http.MethodGet, path: "/v2/templates"}
	return listRecords(ctx, c, cl, &out, &out.Templates, `{"templates": [...]}`)
}

// DeleteTemplate deletes a template; ErrNotFound means it is already gone. A
// template still bound to an endpoint answers ErrBadRequest.
func (c *Client) DeleteTemplate(ctx context.Context, id string) error {
	return c.deleteByID(ctx, "template", "/v2/templates", id)
}

// CreateEndpoint creates one Serverless endpoint (POST /v2/serverless), sent
// again only after a 429; reconcile a transport or server error by name.
func (c *Client) CreateEndpoint(ctx context.Context, r CreateEndpointRequest) (*Endpoint, error) {
	op := "create endpoint " + strconv.Quote(r.Name)
	switch {
	case strings.TrimSpace(r.Name) == "":
		return nil, invalidArgument(op, "name is empty")
	case strings.TrimSpace(r.TemplateID) == "":
		return nil, invalidArgument(op, "templateId is empty")
	case r.GPU == nil || len(r.GPU.Pools) == 0:
		return nil, invalidArgument(op, "gpu.pools is empty")
	case r.Workers.Min < 0 || r.Workers.Max < r.Workers.Min:
		return nil, invalidArgument(op, "workers %d–%d: want 0 ≤ min ≤ max", r.Workers.Min, r.Workers.Max)
	}
	return createRecord(ctx, c, call{op: op, method: http.MethodPost, path: "/v2/serverless", body: r}, "endpoint", r.Name,
		func(e *Endpoint) (string, string) { return e.ID, e.Name })
}

// GetEndpoint reads one endpoint.
func (c *Client) GetEndpoint(ctx context.Context, id string) (*Endpoint, error) {
	return getByID(ctx, c, "endpoint", "/v2/serverless", id, endpointID)
}

// ListEndpoints lists the account's Serverless endpoints.
func (c *Client) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	var out struct {
		Endpoints *[]Endpoint `json:"endpoints"`
	}
	cl := call{op: "list endpoints", method: http.MethodGet, path: "/v2/serverless"}
	return listRecords(ctx, c, cl, &out, &out.Endpoints, `{"endpoints": [...]}`)
}

// ScaleEndpoint sets an endpoint's worker bounds (PATCH). Setting bounds is
// idempotent, so unlike a create it is retried within the policy.
func (c *Client) ScaleEndpoint(ctx context.Context, id string, w EndpointWorkers) (*Endpoint, error) {
	op := "scale endpoint " + id
	if err := checkID(op, "endpoint", id); err != nil {
		return nil, err
	}
	cl := call{op: op, method: http.MethodPatch, path: "/v2/serverless/" + url.PathEscape(id), body: UpdateEndpointWorkers{Workers: w}}
	return getRecord(reqpolicy.AllowRetry(ctx), c, cl, "endpoint", id, endpointID)
}

func endpointID(e *Endpoint) string { return e.ID }

// DeleteEndpoint deletes an endpoint; ErrNotFound means it is already gone.
func (c *Client) DeleteEndpoint(ctx context.Context, id string) error {
	return c.deleteByID(ctx, "endpoint", "/v2/serverless", id)
}
