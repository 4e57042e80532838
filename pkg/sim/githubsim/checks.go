package githubsim

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits GitHub applies to check run output.
const (
	maxOutputChars       = 65535
	maxAnnotationsPerReq = 50
)

// CheckRunOutput is a check run's output.
type CheckRunOutput struct {
	Title   string
	Summary string
	Text    string
}

// CheckRun is a check run as the inspection API returns it and AddCheckRun takes it.
type CheckRun struct {
	ID int64
	// Repo is "owner/name"; inspection fills it in.
	Repo       string
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string
	ExternalID string
	DetailsURL string
	HTMLURL    string
	// AppID is the GitHub App that owns the check run; AppSlug its URL name.
	AppID       int64
	AppSlug     string
	StartedAt   time.Time
	CompletedAt time.Time
	Output      CheckRunOutput
}

type checkRun struct {
	CheckRun
	repo      *repo
	suiteID   int64
	hasOutput bool
}

// checkRunRequest is the body of create and update; pointers tell absent from empty.
type checkRunRequest struct {
	Name        *string        `json:"name"`
	HeadSHA     *string        `json:"head_sha"`
	DetailsURL  *string        `json:"details_url"`
	ExternalID  *string        `json:"external_id"`
	Status      *string        `json:"status"`
	Conclusion  *string        `json:"conclusion"`
	StartedAt   *string        `json:"started_at"`
	CompletedAt *string        `json:"completed_at"`
	Output      *outputRequest `json:"output"`
}

type outputRequest struct {
	Title       *string `json:"title"`
	Summary     *string `json:"summary"`
	Text        *string `json:"text"`
	Annotations []any   `json:"annotations"`
}

var (
	checkStatuses    = []string{"queued", "in_progress", "completed"}
	checkConclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}
)

// AddCheckRun records a check run as if its App had created it (to set up earlier gates, or
// gates from other Apps) and returns its id. Status and times default as the API's do.
func (s *Server) AddCheckRun(fullName string, run CheckRun) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return 0, err
	}
	if run.AppID == 0 {
		return 0, invalid("check run %q: AppID is required; only GitHub Apps create check runs", run.Name)
	}
	req := checkRunRequest{Name: &run.Name, HeadSHA: &run.HeadSHA, ExternalID: &run.ExternalID}
	req.Status = strOrNull(run.Status)
	req.Conclusion = strOrNull(run.Conclusion)
	req.DetailsURL = strOrNull(run.DetailsURL)
	req.StartedAt = stampOrNull(run.StartedAt)
	req.CompletedAt = stampOrNull(run.CompletedAt)
	if run.Output != (CheckRunOutput{}) {
		req.Output = &outputRequest{Title: &run.Output.Title, Summary: &run.Output.Summary, Text: strOrNull(run.Output.Text)}
	}
	who := Identity{AppID: run.AppID, AppSlug: run.AppSlug}.normalized()
	cr, err := s.createCheckRunFrom(rp, who, req, s.clock.Now())
	if err != nil {
		return 0, err
	}
	return cr.ID, nil
}

// CheckRuns returns the check runs on headSHA in a repository, oldest first.
func (s *Server) CheckRuns(fullName, headSHA string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, cr := range s.checkRuns {
		if strings.EqualFold(cr.Repo, fullName) && cr.HeadSHA == headSHA {
			out = append(out, cr.CheckRun)
		}
	}
	return out
}

func (s *Server) createCheckRunFrom(rp *repo, who Identity, req checkRunRequest, now time.Time) (*checkRun, error) {
	if who.AppID == 0 {
		return nil, forbidden("You must authenticate via a GitHub App.")
	}
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		return nil, invalid("Invalid request. \"name\" wasn't supplied.")
	}
	if req.HeadSHA == nil {
		return nil, invalid("Invalid request. \"head_sha\" wasn't supplied.")
	}
	if !shaPattern.MatchString(*req.HeadSHA) {
		return nil, invalid("No commit found for SHA: %s", *req.HeadSHA)
	}
	cr := &checkRun{
		CheckRun: CheckRun{
			ID: s.nextID(), Repo: rp.FullName(), HeadSHA: *req.HeadSHA, Status: "queued",
			AppID: who.AppID, AppSlug: who.AppSlug, StartedAt: now,
		},
		repo: rp,
	}
	cr.HTMLURL = s.webURL + "/" + rp.FullName() + "/runs/" + itoa(cr.ID)
	if err := applyCheckRun(cr, req, now); err != nil {
		return nil, err
	}
	// Each App gets one suite per commit; ids are handed out as suites appear.
	suiteKey := strconv.FormatInt(who.AppID, 10) + "/" + rp.FullName() + "/" + cr.HeadSHA
	if _, ok := s.checkSuites[suiteKey]; !ok {
		s.checkSuites[suiteKey] = s.nextID()
	}
	cr.suiteID = s.checkSuites[suiteKey]
	s.checkRuns = append(s.checkRuns, cr)
	return cr, nil
}

// applyCheckRun validates req and applies it to cr; on error cr is unchanged.
func applyCheckRun(cr *checkRun, req checkRunRequest, now time.Time) error {
	next := *cr
	if req.Name != nil {
		if strings.TrimSpace(*req.Name) == "" {
			return invalid("name must not be blank")
		}
		next.Name = *req.Name
	}
	if req.ExternalID != nil {
		next.ExternalID = *req.ExternalID
	}
	if req.DetailsURL != nil {
		next.DetailsURL = *req.DetailsURL
	}
	var err error
	if next.StartedAt, err = parseOptionalTime("started_at", req.StartedAt, next.StartedAt); err != nil {
		return err
	}
	if next.CompletedAt, err = parseOptionalTime("completed_at", req.CompletedAt, next.CompletedAt); err != nil {
		return err
	}
	if req.Status != nil {
		if !slices.Contains(checkStatuses, *req.Status) {
			return invalid("status %q is not included in the list (%s)", *req.Status, strings.Join(checkStatuses, ", "))
		}
		next.Status = *req.Status
		if next.Status != "completed" {
			next.Conclusion, next.CompletedAt = "", time.Time{}
		}
	}
	if req.Conclusion != nil {
		if !slices.Contains(checkConclusions, *req.Conclusion) {
			return invalid("conclusion %q is not included in the list (%s)", *req.Conclusion, strings.Join(checkConclusions, ", "))
		}
		// GitHub: providing a conclusion sets the status to completed.
		next.Conclusion, next.Status = *req.Conclusion, "completed"
	}
	if next.Status == "completed" {
		if next.Conclusion == "" {
			return invalid("conclusion must be provided when status is completed")
		}
		if next.CompletedAt.IsZero() {
			next.CompletedAt = now
		}
	}
	if req.Output != nil {
		out, err := validateOutput(req.Output)
		if err != nil {
			return err
		}
		next.Output, next.hasOutput = out, true // a PATCH replaces the whole output
	}
	if next.AppID == ActionsAppID {
		// Check runs made with GITHUB_TOKEN have details_url overwritten with html_url.
		next.DetailsURL = next.HTMLURL
	}
	*cr = next
	return nil
}

// parseOptionalTime parses an ISO 8601 request field, keeping current when it is absent.
func parseOptionalTime(field string, v *string, current time.Time) (time.Time, error) {
	if v == nil {
		return current, nil
	}
	t, err := time.Parse(time.RFC3339, *v)
	if err != nil {
		return current, invalid("%s %q is not an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SSZ)", field, *v)
	}
	return t, nil
}

func validateOutput(o *outputRequest) (CheckRunOutput, error) {
	if o.Title == nil || o.Summary == nil {
		return CheckRunOutput{}, invalid("output requires title and summary")
	}
	if n := utf8.RuneCountInString(*o.Summary); n > maxOutputChars || len(*o.Summary) > maxOutputChars {
		return CheckRunOutput{}, invalid("Invalid request. Only %d characters are allowed; %d were supplied. (output.summary exceeds a maximum bytesize of %d)", maxOutputChars, n, maxOutputChars)
	}
	out := CheckRunOutput{Title: *o.Title, Summary: *o.Summary}
	if o.Text != nil {
		if n := utf8.RuneCountInString(*o.Text); n > maxOutputChars {
			return CheckRunOutput{}, invalid("Invalid request. Only %d characters are allowed; %d were supplied. (output.text)", maxOutputChars, n)
		}
		out.Text = truncateBytes(*o.Text, maxOutputChars) // measured: text over the bytesize is cut, not refused
	}
	if len(o.Annotations) > maxAnnotationsPerReq {
		return CheckRunOutput{}, invalid("Invalid request. Only %d annotations are allowed per request; %d were supplied.", maxAnnotationsPerReq, len(o.Annotations))
	}
	return out, nil
}

// truncateBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncateBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

type appJSON struct {
	ID      int64  `json:"id"`
	Slug    string `json:"slug"`
	NodeID  string `json:"node_id"`
	Name    string `json:"name"`
	HTMLURL string `json:"html_url"`
}

type outputJSON struct {
	Title            *string `json:"title"`
	Summary          *string `json:"summary"`
	Text             *string `json:"text"`
	AnnotationsCount int     `json:"annotations_count"`
	AnnotationsURL   string  `json:"annotations_url"`
}

type suiteJSON struct {
	ID int64 `json:"id"`
}

type prRefJSON struct {
	Ref  string `json:"ref"`
	SHA  string `json:"sha"`
	Repo struct {
		ID   int64  `json:"id"`
		URL  string `json:"url"`
		Name string `json:"name"`
	} `json:"repo"`
}

type prMiniJSON struct {
	URL    string    `json:"url"`
	ID     int64     `json:"id"`
	Number int       `json:"number"`
	Head   prRefJSON `json:"head"`
	Base   prRefJSON `json:"base"`
}

type checkRunJSON struct {
	ID           int64        `json:"id"`
	HeadSHA      string       `json:"head_sha"`
	NodeID       string       `json:"node_id"`
	ExternalID   string       `json:"external_id"`
	URL          string       `json:"url"`
	HTMLURL      string       `json:"html_url"`
	DetailsURL   *string      `json:"details_url"`
	Status       string       `json:"status"`
	Conclusion   *string      `json:"conclusion"`
	StartedAt    *string      `json:"started_at"`
	CompletedAt  *string      `json:"completed_at"`
	Output       outputJSON   `json:"output"`
	Name         string       `json:"name"`
	CheckSuite   suiteJSON    `json:"check_suite"`
	App          appJSON      `json:"app"`
	PullRequests []prMiniJSON `json:"pull_requests"`
}

func (s *Server) checkRunJSON(c *call, cr *checkRun) checkRunJSON {
	checkRunURL := c.repoAPIURL(cr.repo) + "/check-runs/" + itoa(cr.ID)
	out := outputJSON{AnnotationsURL: checkRunURL + "/annotations"}
	if cr.hasOutput {
		out.Title, out.Summary, out.Text = &cr.Output.Title, &cr.Output.Summary, strOrNull(cr.Output.Text)
	}
	prs := []prMiniJSON{}
	for _, p := range sortedPulls(cr.repo) {
		// GitHub lists the same-repository open pull requests whose head is this commit.
		if p.State != "open" || p.HeadRepo != "" || p.HeadSHA != cr.HeadSHA {
			continue
		}
		prs = append(prs, prMini(c, cr.repo, p))
	}
	return checkRunJSON{
		ID: cr.ID, HeadSHA: cr.HeadSHA, NodeID: nodeID("CR", cr.ID), ExternalID: cr.ExternalID,
		URL: checkRunURL, HTMLURL: cr.HTMLURL, DetailsURL: strOrNull(cr.DetailsURL), Status: cr.Status,
		Conclusion: strOrNull(cr.Conclusion), StartedAt: stampOrNull(cr.StartedAt), CompletedAt: stampOrNull(cr.CompletedAt),
		Output: out, Name: cr.Name, CheckSuite: suiteJSON{ID: cr.suiteID},
		App: appJSON{
			ID: cr.AppID, Slug: cr.AppSlug, NodeID: nodeID("A", cr.AppID), Name: cr.AppSlug,
			HTMLURL: s.webURL + "/apps/" + cr.AppSlug,
		},
		PullRequests: prs,
	}
}

func sortedPulls(rp *repo) []*pull {
	out := make([]*pull, 0, len(rp.pulls))
	for _, p := range rp.pulls {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *pull) int { return cmp.Compare(a.Number, b.Number) })
	return out
}

func (s *Server) createCheckRun(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	var req checkRunRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	cr, err := s.createCheckRunFrom(rp, c.who, req, c.now)
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusCreated, s.checkRunJSON(c, cr))
	return nil
}

func (s *Server) checkRunByPath(c *call) (*checkRun, error) {
	return repoObject(c, "check_run_id", "check run", s.checkRuns, func(cr *checkRun) (int64, *repo) { return cr.ID, cr.repo })
}

func (s *Server) getCheckRun(c *call) error {
	return getOne(c, s.checkRunByPath, func(cr *checkRun) checkRunJSON { return s.checkRunJSON(c, cr) })
}

func (s *Server) updateCheckRun(c *call) error {
	cr, err := s.checkRunByPath(c)
	if err != nil {
		return err
	}
	if c.who.AppID != cr.AppID {
		return forbidden("Invalid app_id `%d` - check run can only be modified by the GitHub App that created it.", c.who.AppID)
	}
	var req checkRunRequest
	if err := c.decode(&req); err != nil {
		return err
	}
	if req.HeadSHA != nil || req.StartedAt != nil {
		return invalid("Invalid request. head_sha and started_at cannot be updated.")
	}
	if err := applyCheckRun(cr, req, c.now); err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, s.checkRunJSON(c, cr))
	return nil
}

// listCheckRunsForRef answers GET /repos/{o}/{r}/commits/{ref}/check-runs; the ref may hold
// slashes, so the route takes the rest of the path and strips the suffix here.
func (s *Server) listCheckRunsForRef(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	ref, ok := strings.CutSuffix(c.r.PathValue("ref"), "/check-runs")
	if !ok || ref == "" {
		return notFound("no route for %s", c.r.URL.Path)
	}
	q := c.r.URL.Query()
	filter := cmp.Or(q.Get("filter"), "latest")
	if filter != "latest" && filter != "all" {
		return invalid("filter %q, want latest or all", filter)
	}
	var appID int64
	if v := q.Get("app_id"); v != "" {
		if appID, err = strconv.ParseInt(v, 10, 64); err != nil {
			return invalid("app_id %q is not an integer", v)
		}
	}
	sha := rp.resolveRef(ref)
	var matched []*checkRun
	seen := map[string]bool{}
	for _, cr := range slices.Backward(s.checkRuns) { // newest first
		if cr.repo != rp || cr.HeadSHA != sha ||
			(q.Has("check_name") && cr.Name != q.Get("check_name")) ||
			(q.Has("status") && cr.Status != q.Get("status")) ||
			(appID != 0 && cr.AppID != appID) {
			continue
		}
		// latest keeps only the newest run of each name from each App.
		key := itoa(cr.AppID) + "/" + cr.Name
		if filter == "latest" && seen[key] {
			continue
		}
		seen[key] = true
		matched = append(matched, cr)
	}
	return writePage(c, "check_runs", matched, func(cr *checkRun) checkRunJSON { return s.checkRunJSON(c, cr) })
}
