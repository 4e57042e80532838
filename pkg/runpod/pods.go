package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/inputform"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/wire"
)

// PodStatus is a pod's lifecycle state.
type PodStatus string

// Pod statuses.
const (
	PodProvisioning PodStatus = "PROVISIONING" // being allocated
	PodStarting     PodStatus = "STARTING"     // container starting
	PodRunning      PodStatus = "RUNNING"      // container healthy
	PodExited       PodStatus = "EXITED"       // container stopped
	PodError        PodStatus = "ERROR"        // unrecoverable container error
	PodTerminated   PodStatus = "TERMINATED"   // permanently deleted
)

// Ended reports whether the container has stopped for good from the point of
// view of a startup watch: EXITED, ERROR or TERMINATED.
func (s PodStatus) Ended() bool { return s == PodExited || s == PodError || s == PodTerminated }

// Pod actions for PodAction.
const (
	ActionStart     = "start"
	ActionStop      = "stop"
	ActionRestart   = "restart"
	ActionTerminate = "terminate"
)

// Pod is a RunPod pod as GET /v2/pods/{id} shows it. Unknown fields are
// ignored; null strings read as "". Env may hold secrets (the runner's JIT
// config): never log a Pod's Env; String leaves it out.
type Pod struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Status       PodStatus         `json:"status"`
	Actions      []string          `json:"actions,omitempty"` // transitions valid now
	Image        string            `json:"image"`
	Args         string            `json:"args,omitempty"`
	Disk         int               `json:"disk,omitempty"` // container disk, GB
	Ports        []string          `json:"ports,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	Registry     string            `json:"registry,omitempty"`
	Mounts       *Mounts           `json:"mounts,omitempty"`
	GPU          *PodGPU           `json:"gpu,omitempty"` // nil for CPU pods
	Cloud        string            `json:"cloud"`
	DataCenterID string            `json:"dataCenterId"`  // "" until scheduled
	CudaVersion  string            `json:"cudaVersion"`   // the host's; "" when unknown
	SSH          *PodSSH           `json:"ssh,omitempty"` // nil when the answer has no ssh block
	Template     string            `json:"template,omitempty"`
	Locked       bool              `json:"locked"`
	// Cost is the current USD per hour; it reads 0 once EXITED or TERMINATED,
	// so capture it while the pod runs.
	Cost wire.Float `json:"cost"`
	// Runtime is nil when the API shows null (the pod is not RUNNING).
	Runtime   *PodRuntime `json:"runtime"`
	CreatedAt wire.Time   `json:"createdAt"`
	// StartedAt is unknown (never the zero time) until the provider starts the pod.
	StartedAt wire.Time `json:"startedAt"`
}

// UnmarshalJSON decodes a v2 pod, and a saved v1 record through its v1 field
// names (delta 3).
func (p *Pod) UnmarshalJSON(b []byte) error {
	type plain Pod // no methods, so no recursion
	var both struct {
		plain
		podV1Fields
	}
	if err := json.Unmarshal(b, &both); err != nil {
		return err
	}
	*p = Pod(both.plain)
	both.podV1Fields.fill(p)
	return nil
}

// String summarises the pod without its environment.
func (p Pod) String() string {
	gpu := "no GPU"
	if p.GPU != nil {
		gpu = fmt.Sprintf("%d× %s", max(p.GPU.Count, 1), p.GPU.ID)
	}
	return fmt.Sprintf("pod %s (%s) %s, %s, %s, started %s", p.ID, p.Name, p.Status, gpu, money.PerHour(float64(p.Cost)).Format(money.Precision{Min: 3, Max: 3}), p.StartedAt)
}

// PodGPU is the GPU assignment of a pod.
type PodGPU struct {
	ID    string `json:"id"`
	Count int    `json:"count,omitempty"`
}

// Mounts are a pod's storage mounts; at most one kind is set.
type Mounts struct {
	Persistent *PersistentMount `json:"persistent,omitempty"`
	Network    []NetworkMount   `json:"network,omitempty"`
}

// PersistentMount is host-local storage (at least 10 GB).
type PersistentMount struct {
	Size int    `json:"size"` // GB
	Path string `json:"path"`
}

// NetworkMount attaches an existing network volume.
type NetworkMount struct {
	VolumeID string `json:"volumeId"`
	Path     string `json:"path"`
}

// PodRuntime is the live state of a running pod.
type PodRuntime struct {
	Uptime int              `json:"uptime,omitempty"` // seconds since the container started
	GPUs   []GPUUtilization `json:"gpus,omitempty"`
	CPU    *Utilization     `json:"cpu,omitempty"`
	Memory *Utilization     `json:"memory,omitempty"`
	Ports  []RuntimePort    `json:"ports,omitempty"`
}

// GPUUtilization is one GPU's load in percent.
type GPUUtilization struct {
	Util       int `json:"util"`
	MemoryUtil int `json:"memoryUtil"`
}

// Utilization is a load in percent.
type Utilization struct {
	Util int `json:"util"`
}

// RuntimePort is a live port mapping.
type RuntimePort struct {
	Private int    `json:"private"`
	Public  *int   `json:"public,omitempty"` // nil until mapped
	Type    string `json:"type"`
	IP      string `json:"ip,omitempty"`
}

// CreatePodRequest is the body of POST /v2/pods. Empty fields are omitted, so
// the API's defaults apply.
type CreatePodRequest struct {
	Name          string            `json:"name"`
	Image         string            `json:"image,omitempty"`      // required unless TemplateID is set
	TemplateID    string            `json:"templateId,omitempty"` // a template's settings, overridden by the body
	GPU           *CreateGPU        `json:"gpu,omitempty"`        // required: the client creates GPU pods only
	Cloud         string            `json:"cloud,omitempty"`      // CloudSecure (API default) or CloudCommunity
	DataCenterIDs []string          `json:"dataCenterIds,omitempty"`
	Disk          int               `json:"disk,omitempty"` // container disk, GB
	Mounts        *Mounts           `json:"mounts,omitempty"`
	Ports         []string          `json:"ports,omitempty"` // "8888/http", "22/tcp"
	Env           map[string]string `json:"env,omitempty"`
	Entrypoint    []string          `json:"entrypoint,omitempty"` // delta 1
	Cmd           []string          `json:"cmd,omitempty"`        // delta 1
	Registry      string            `json:"registry,omitempty"`   // registry credential id for private images
	StartSSH      bool              `json:"startSsh,omitempty"`
}

// CreateGPU selects the GPU of a new pod and constrains the host's CUDA.
type CreateGPU struct {
	ID                  string   `json:"id"`
	Count               int      `json:"count,omitempty"`               // 0 = API default (1)
	MinCudaVersion      string   `json:"minCudaVersion,omitempty"`      // "12.6": an open-ended floor
	AllowedCudaVersions []string `json:"allowedCudaVersions,omitempty"` // exact set; excludes MinCudaVersion
}

// validate refuses bodies the API would reject as malformed. Errors name the
// field and never echo env values, which may be secrets.
func (r CreatePodRequest) validate(op string) error {
	switch {
	case strings.TrimSpace(r.Name) == "":
		return invalidArgument(op, "name is empty")
	case r.Image == "" && r.TemplateID == "":
		return invalidArgument(op, "image is empty (and no templateId)")
	case r.GPU == nil:
		return invalidArgument(op, "gpu is missing: the client creates GPU pods only")
	case strings.TrimSpace(r.GPU.ID) == "":
		return invalidArgument(op, "gpu.id is empty")
	case r.GPU.Count < 0:
		return invalidArgument(op, "gpu.count %d: want a positive count", r.GPU.Count)
	case r.GPU.MinCudaVersion != "" && !cudaVersionRE.MatchString(r.GPU.MinCudaVersion):
		return invalidArgument(op, "gpu.minCudaVersion %q: want major.minor, e.g. 12.6", r.GPU.MinCudaVersion)
	case r.GPU.MinCudaVersion != "" && len(r.GPU.AllowedCudaVersions) > 0:
		return invalidArgument(op, "gpu.minCudaVersion and gpu.allowedCudaVersions are mutually exclusive")
	case r.Cloud != "" && r.Cloud != CloudSecure && r.Cloud != CloudCommunity:
		return invalidArgument(op, "cloud %q: want %s or %s", r.Cloud, CloudSecure, CloudCommunity)
	case r.Disk < 0:
		return invalidArgument(op, "disk %d: want a positive size in GB", r.Disk)
	}
	for _, v := range r.GPU.AllowedCudaVersions {
		if !cudaVersionRE.MatchString(v) {
			return invalidArgument(op, "gpu.allowedCudaVersions entry %q: want major.minor, e.g. 12.8", v)
		}
	}
	for key := range r.Env {
		if key == "" {
			return invalidArgument(op, "env has an empty key")
		}
	}
	if m := r.Mounts; m != nil {
		switch {
		case m.Persistent != nil && len(m.Network) > 0:
			return invalidArgument(op, "mounts.persistent and mounts.network are mutually exclusive")
		case len(m.Network) > 1:
			return invalidArgument(op, "mounts.network has %d entries: want at most 1", len(m.Network))
		case m.Persistent != nil && (m.Persistent.Size < 10 || m.Persistent.Path == ""):
			return invalidArgument(op, "mounts.persistent: want size ≥ 10 GB and a path")
		case len(m.Network) == 1 && (m.Network[0].VolumeID == "" || m.Network[0].Path == ""):
			return invalidArgument(op, "mounts.network[0]: want volumeId and path")
		}
	}
	return nil
}

// CreatePod creates one pod (POST /v2/pods). It is sent exactly once, never
// retried: when the error is ErrTransport or ErrServer the pod may exist
// anyway, so reconcile by its unique name before anything else. Any 400 is
// ErrCapacity (nothing created; try the next candidate) unless its detail
// clearly states a request rule, which is ErrBadRequest.
func (c *Client) CreatePod(ctx context.Context, r CreatePodRequest) (*Pod, error) {
	op := "create pod " + strconv.Quote(r.Name)
	if err := r.validate(op); err != nil {
		return nil, err
	}
	var pod Pod
	if err := c.getJSON(ctx, call{op: op, method: http.MethodPost, path: "/v2/pods", body: r, create: true}, &pod); err != nil {
		return nil, err
	}
	// A 2xx that names no pod, or another pod, cannot be tracked or deleted:
	// the pod it created (if any) must be found by its unique name instead.
	switch {
	case strings.TrimSpace(pod.ID) == "":
		return nil, c.unusable(op, "the answer names no pod id")
	case !ValidPodID(pod.ID):
		return nil, c.unusable(op, fmt.Sprintf("the answer names a malformed pod id %q", pod.ID))
	case pod.Name != r.Name:
		return nil, c.unusable(op, fmt.Sprintf("the answer describes pod %q named %q, not the requested name", pod.ID, pod.Name))
	}
	return &pod, nil
}

// GetPod reads one pod (GET /v2/pods/{id}).
func (c *Client) GetPod(ctx context.Context, id string) (*Pod, error) {
	op := "get pod " + podRef(id)
	if err := checkPodID(op, id); err != nil {
		return nil, err
	}
	return getRecord(ctx, c, call{op: op, method: http.MethodGet, path: "/v2/pods/" + url.PathEscape(id)}, "pod", id,
		func(p *Pod) string { return p.ID })
}

// unusable is a decoded success answer that does not describe what was asked for.
func (c *Client) unusable(op, detail string) *APIError {
	return &APIError{Op: op, Title: "unusable record", Detail: clip(c.redact(detail)), Kind: KindUnusableRecord, redactor: c.policy.Redactor()}
}

// DeletePod terminates and deletes a pod (DELETE /v2/pods/{id}). ErrNotFound
// means it is already gone, which callers treat as confirmed deletion.
func (c *Client) DeletePod(ctx context.Context, id string) error {
	op := "delete pod " + podRef(id)
	if err := checkPodID(op, id); err != nil {
		return err
	}
	_, _, err := c.send(ctx, call{op: op, method: http.MethodDelete, path: "/v2/pods/" + url.PathEscape(id)})
	return err
}

// PodAction triggers start, stop, restart or terminate (POST
// /v2/pods/{id}/action) and returns the updated pod; terminate answers 204 and
// returns a nil pod. ErrConflict means the action is invalid for the status.
func (c *Client) PodAction(ctx context.Context, id, action string) (*Pod, error) {
	op := fmt.Sprintf("%s pod %s", action, podRef(id))
	if err := checkPodID(op, id); err != nil {
		return nil, err
	}
	switch action {
	case ActionStart, ActionStop, ActionRestart, ActionTerminate:
	default:
		return nil, invalidArgument(op, "action %q: want %s, %s, %s or %s", action, ActionStart, ActionStop, ActionRestart, ActionTerminate)
	}
	body := struct {
		Action string `json:"action"`
	}{action}
	status, data, err := c.send(ctx, call{op: op, method: http.MethodPost, path: "/v2/pods/" + url.PathEscape(id) + "/action", body: body})
	if err != nil {
		return nil, err
	}
	if status == http.StatusNoContent {
		return nil, nil
	}
	var pod Pod
	if err := json.Unmarshal(data, &pod); err != nil {
		return nil, c.malformed(op, status, err)
	}
	return &pod, nil
}

// ListPodsQuery filters GET /v2/pods.
type ListPodsQuery struct {
	IncludeClusterPods bool
	Limit              int // page size (delta 2); 0 = the API's default
}

// ListPods lists every pod, following nextCursor (delta 2) to the end within
// the client's time budget (DefaultListPodsBudget, or ctx's deadline when
// sooner) rather than a page count, decoding each page as it arrives. A
// listing the budget cuts short fails, never a short list: callers decide
// about pods only from complete lists. A page bound set with WithMaxListPages
// fails with ErrPageBound when reached with pages left.
func (c *Client) ListPods(ctx context.Context, q ListPodsQuery) ([]Pod, error) {
	const op = "list pods"
	if q.Limit < 0 {
		return nil, invalidArgument(op, "limit %d: want a positive page size", q.Limit)
	}
	budget := c.listBudget
	if budget <= 0 {
		budget = DefaultListPodsBudget
	}
	lctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var pods []Pod
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		query := url.Values{}
		if q.IncludeClusterPods {
			query.Set("includeClusterPods", "true")
		}
		if q.Limit > 0 {
			query.Set(listPodsLimitParam, strconv.Itoa(q.Limit))
		}
		if cursor != "" {
			query.Set(listPodsCursorParam, cursor)
		}
		next, err := c.listPodsPage(lctx, fmt.Sprintf("%s (page %d)", op, page), query, &pods)
		switch {
		case err != nil && ctx.Err() == nil && lctx.Err() != nil:
			return nil, fmt.Errorf("%s: %d pages (%d pods) read within the %s listing budget and the server has more; the list is incomplete: %w",
				op, page-1, len(pods), budget, err)
		case err != nil:
			return nil, err
		case next == "":
			return pods, nil
		case seen[next]:
			return nil, c.malformed(op, http.StatusOK, fmt.Errorf("page %d repeats an earlier cursor; the listing would never end", page))
		case c.maxListPages > 0 && page >= c.maxListPages:
			return nil, &APIError{
				Op: op, Title: "page bound exceeded",
				Detail: fmt.Sprintf("%d pages read and the server has more; the list is incomplete", page),
				Kind:   KindPageBound,
			}
		}
		seen[next] = true
		cursor = next
	}
}

// listPodsPage reads one page, decoding its pods into *pods as the body
// streams in, and returns its next cursor.
func (c *Client) listPodsPage(ctx context.Context, op string, query url.Values, pods *[]Pod) (string, error) {
	resp, err := c.open(ctx, call{op: op, method: http.MethodGet, path: "/v2/pods", query: query})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	before := len(*pods)
	got, next, err := decodePodsStream(resp.Body, *pods)
	if err != nil {
		*pods = got[:before]
		var cut *bodyReadError
		switch {
		case ctx.Err() != nil:
			return "", c.failure(op, resp.StatusCode, ctx.Err())
		case errors.As(err, &cut):
			// The status arrived but the body did not: a transport failure.
			return "", c.failure(op, resp.StatusCode, cut.err)
		}
		return "", c.malformed(op, resp.StatusCode, err)
	}
	*pods = got
	return next, nil
}

// ValidPodID reports whether id has the shape of a RunPod pod id
// (inputform's pod-id kind). Anything else — a path, spaces, a quote — is
// never sent: the API would answer 404 for it, which a deletion would take
// for "already gone".
func ValidPodID(id string) bool { return inputform.ValidPodID(id) }

// podRef names a pod id in an error: as it is when well formed, else quoted
// and clipped, so an odd id cannot break a log line.
func podRef(id string) string {
	if ValidPodID(id) {
		return id
	}
	return clip(strconv.Quote(id))
}

func checkPodID(op, id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return invalidArgument(op, "pod id is empty")
	case !ValidPodID(id):
		return invalidArgument(op, "pod id %s is malformed: want letters, digits, _ or - (at most 64)", podRef(id))
	}
	return nil
}
