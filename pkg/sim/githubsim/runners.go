package githubsim

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"
)

// offlineRunnerLifetime is how long GitHub keeps an ephemeral runner that is not connected.
const offlineRunnerLifetime = 24 * time.Hour

// Runner is a self-hosted runner in the registry, as the inspection API returns it.
type Runner struct {
	ID   int64
	Name string
	// Repo is "owner/name" for a repository runner; Org names an organization runner's owner.
	Repo    string
	Org     string
	GroupID int64
	Labels  []string
	Online  bool
	Busy    bool
	// JobID is the job the runner is running; 0 when idle.
	JobID     int64
	CreatedAt time.Time
}

type runner struct {
	Runner
	secret    string
	connected bool      // the JIT config has been used
	removed   bool      // gone from the registry; its config answers 410
	lastSeen  time.Time // mint or disconnect, for the offline lifetime
}

// jitPayload is what an encoded JIT config carries. Only the secret authenticates; the rest
// lets a stand-in runner find the server without other configuration.
type jitPayload struct {
	RunnerID   int64  `json:"runner_id"`
	RunnerName string `json:"runner_name"`
	ConnectURL string `json:"connect_url"`
	Secret     string `json:"secret"`
}

// errBadJITConfig never echoes the config: it is a credential.
var errBadJITConfig = newError(http.StatusUnauthorized, ErrUnauthorized, "JIT config is malformed or unknown")

// decodeJITConfig parses an encoded JIT config: base64 of a JSON object with a secret.
func decodeJITConfig(encoded string) (jitPayload, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return jitPayload{}, errBadJITConfig
	}
	var p jitPayload
	if err := json.Unmarshal(raw, &p); err != nil || p.Secret == "" || p.RunnerID == 0 {
		return jitPayload{}, errBadJITConfig
	}
	return p, nil
}

// Runners returns every runner in the registry, oldest first.
func (s *Server) Runners() []Runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advance(s.clock.Now())
	out := make([]Runner, 0, len(s.runners))
	for _, r := range s.runners {
		rr := r.Runner
		rr.Labels = slices.Clone(r.Labels)
		out = append(out, rr)
	}
	return out
}

// AddRunnerGroup makes a runner group id valid for JIT configs; group 1 ("Default") exists.
func (s *Server) AddRunnerGroup(id int64, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runnerGroups[id] = name
}

// RunnerConnect is what a runner started with an encoded JIT config does: it comes online
// and may be handed a queued job whose labels it carries. A config connects once.
func (s *Server) RunnerConnect(encoded string) (Runner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	r, err := s.connect(encoded, now)
	if err != nil {
		return Runner{}, err
	}
	return r.Runner, nil
}

// RunnerDisconnect takes the runner of an encoded JIT config offline. A runner lost in the
// middle of a job leaves the job in progress until its lock expires (RunnerLostTimeout),
// when the job fails and the runner leaves the registry, as an ephemeral runner does.
func (s *Server) RunnerDisconnect(encoded string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.advance(now)
	return s.disconnect(encoded, now)
}

func (s *Server) runnerForConfig(encoded string) (*runner, error) {
	p, err := decodeJITConfig(encoded)
	if err != nil {
		return nil, err
	}
	r, ok := s.jitSecrets[p.Secret]
	if !ok || r.ID != p.RunnerID {
		return nil, errBadJITConfig
	}
	return r, nil
}

func (s *Server) connect(encoded string, now time.Time) (*runner, error) {
	r, err := s.runnerForConfig(encoded)
	if err != nil {
		return nil, err
	}
	if r.removed {
		return nil, gone("runner %q was removed", r.Name)
	}
	if r.connected {
		return nil, conflict("the JIT config of runner %q was already used", r.Name)
	}
	r.connected, r.Online = true, true
	s.assignJobs(now)
	return r, nil
}

func (s *Server) disconnect(encoded string, now time.Time) error {
	r, err := s.runnerForConfig(encoded)
	if err != nil {
		return err
	}
	if r.removed || !r.Online {
		return nil
	}
	r.Online, r.lastSeen = false, now
	if j := s.jobByID(r.JobID); j != nil && j.Status == "in_progress" {
		s.loseRunner(j, now) // the job fails when its lock expires, not at once
	}
	return nil
}

func (s *Server) removeRunner(r *runner) {
	r.removed, r.Online, r.Busy = true, false, false
	s.runners = slices.DeleteFunc(s.runners, func(x *runner) bool { return x == r })
}

// runnerScope is the part of an API path that owns runners: a repository or an organization.
type runnerScope struct {
	repo *repo
	org  string
}

func (c *call) runnerScope() (runnerScope, error) {
	if org := c.r.PathValue("org"); org != "" {
		for _, rp := range c.s.repos {
			if strings.EqualFold(rp.Owner, org) {
				return runnerScope{org: rp.Owner}, nil
			}
		}
		return runnerScope{}, notFound("organization %q", org)
	}
	rp, err := c.repo()
	return runnerScope{repo: rp}, err
}

func (sc runnerScope) holds(r *runner) bool {
	if sc.repo != nil {
		return strings.EqualFold(r.Repo, sc.repo.FullName())
	}
	return r.Org != "" && strings.EqualFold(r.Org, sc.org)
}

type runnerLabelJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

type runnerJSON struct {
	ID            int64             `json:"id"`
	Name          string            `json:"name"`
	OS            string            `json:"os"`
	Status        string            `json:"status"`
	Busy          bool              `json:"busy"`
	Ephemeral     bool              `json:"ephemeral"`
	RunnerGroupID int64             `json:"runner_group_id"`
	Labels        []runnerLabelJSON `json:"labels"`
}

func (s *Server) runnerJSON(r *runner) runnerJSON {
	status := "offline"
	if r.Online {
		status = "online"
	}
	labels := []runnerLabelJSON{}
	for _, l := range r.Labels {
		// JIT runners carry only the labels they were minted with, all custom.
		labels = append(labels, runnerLabelJSON{ID: s.runnerLabelID(l), Name: l, Type: "custom"})
	}
	return runnerJSON{
		ID: r.ID, Name: r.Name, OS: "Linux", Status: status, Busy: r.Busy, Ephemeral: true,
		RunnerGroupID: r.GroupID, Labels: labels,
	}
}

func (s *Server) runnerLabelID(label string) int64 {
	return s.stableID("runner-label:" + strings.ToLower(label))
}

type jitRequest struct {
	Name          *string  `json:"name"`
	RunnerGroupID *int64   `json:"runner_group_id"`
	Labels        []string `json:"labels"`
	WorkFolder    *string  `json:"work_folder"`
}

type jitJSON struct {
	Runner           runnerJSON `json:"runner"`
	EncodedJITConfig string     `json:"encoded_jit_config"`
}

// maxRunnerLabels is GitHub's limit on labels in one JIT request.
const maxRunnerLabels = 100

func (s *Server) generateJITConfig(c *call) error {
	scope, err := c.runnerScope()
	if err != nil {
		return err
	}
	var req jitRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	switch {
	case req.Name == nil:
		return invalid("missing required key: name")
	case req.RunnerGroupID == nil:
		return invalid("missing required key: runner_group_id")
	case req.Labels == nil:
		return invalid("missing required key: labels")
	case strings.TrimSpace(*req.Name) == "":
		return invalid("name must not be blank")
	case len(req.Labels) < 1 || len(req.Labels) > maxRunnerLabels:
		return invalid("labels must have between 1 and %d items, got %d", maxRunnerLabels, len(req.Labels))
	case slices.Contains(req.Labels, ""):
		return invalid("labels must not contain an empty label")
	}
	if _, ok := s.runnerGroups[*req.RunnerGroupID]; !ok {
		return notFound("runner group %d", *req.RunnerGroupID)
	}
	for _, r := range s.runners {
		if scope.holds(r) && strings.EqualFold(r.Name, *req.Name) {
			return alreadyExists("Already exists - A runner with the name %s already exists.", *req.Name)
		}
	}
	r := &runner{
		Runner: Runner{
			ID: s.nextID(), Name: *req.Name, GroupID: *req.RunnerGroupID,
			Labels: slices.Clone(req.Labels), CreatedAt: c.now,
		},
		secret:   s.randomString(43),
		lastSeen: c.now,
	}
	if scope.repo != nil {
		r.Repo = scope.repo.FullName()
	} else {
		r.Org = scope.org
	}
	s.runners = append(s.runners, r)
	s.jitSecrets[r.secret] = r
	s.everyRunner[r.ID] = r
	encoded, err := json.Marshal(jitPayload{
		RunnerID: r.ID, RunnerName: r.Name, ConnectURL: c.apiURL + "/_sim/runners/connect", Secret: r.secret,
	})
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusCreated, jitJSON{Runner: s.runnerJSON(r), EncodedJITConfig: base64.StdEncoding.EncodeToString(encoded)})
	return nil
}

func (s *Server) listRunners(c *call) error {
	scope, err := c.runnerScope()
	if err != nil {
		return err
	}
	name := c.r.URL.Query().Get("name")
	var matched []*runner
	for _, r := range s.runners {
		if scope.holds(r) && (name == "" || r.Name == name) {
			matched = append(matched, r)
		}
	}
	return writePage(c, "runners", matched, func(r *runner) runnerJSON { return s.runnerJSON(r) })
}

func (s *Server) scopedRunner(c *call) (*runner, error) {
	scope, err := c.runnerScope()
	if err != nil {
		return nil, err
	}
	id, err := pathInt(c, "runner_id")
	if err != nil {
		return nil, err
	}
	for _, r := range s.runners {
		if r.ID == id && scope.holds(r) {
			return r, nil
		}
	}
	return nil, notFound("runner %d", id)
}

func (s *Server) getRunner(c *call) error {
	return getOne(c, s.scopedRunner, func(r *runner) runnerJSON { return s.runnerJSON(r) })
}

func (s *Server) deleteRunner(c *call) error {
	r, err := s.scopedRunner(c)
	if err != nil {
		return err
	}
	if r.Busy {
		return invalid("Bad request - Runner %q is still running a job", r.Name)
	}
	s.removeRunner(r)
	c.noContent(http.StatusNoContent)
	return nil
}

type connectRequest struct {
	JITConfig string `json:"jit_config"`
}

type connectJSON struct {
	RunnerID int64    `json:"runner_id"`
	Name     string   `json:"name"`
	Labels   []string `json:"labels"`
	// JobID is the job handed to the runner on connecting, if one was waiting.
	JobID *int64 `json:"job_id"`
}

// connectRunner is the stand-in runner's POST /_sim/runners/connect.
func (s *Server) connectRunner(c *call) error {
	var req connectRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	r, err := s.connect(req.JITConfig, c.now)
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, connectJSON{RunnerID: r.ID, Name: r.Name, Labels: slices.Clone(r.Labels), JobID: idOrNull(r.JobID)})
	return nil
}

// disconnectRunner is the stand-in runner's POST /_sim/runners/disconnect.
func (s *Server) disconnectRunner(c *call) error {
	var req connectRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	if err := s.disconnect(req.JITConfig, c.now); err != nil {
		return err
	}
	c.noContent(http.StatusNoContent)
	return nil
}

// reapOfflineRunners drops ephemeral runners that stayed offline longer than GitHub keeps them.
func (s *Server) reapOfflineRunners(now time.Time) {
	for _, r := range slices.Clone(s.runners) {
		if !r.Online && now.Sub(r.lastSeen) > offlineRunnerLifetime {
			s.removeRunner(r)
		}
	}
}
