package githubsim

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// PullRequestSpec describes a pull request for AddPullRequest and UpdatePullRequest.
type PullRequestSpec struct {
	// Number is assigned (the next free issue number) when zero.
	Number int
	Title  string
	// Author defaults to the repository owner.
	Author string
	// State is "open" (default) or "closed".
	State  string
	Draft  bool
	Merged bool
	// MergeCommitSHA is the test merge commit GitHub computes for an open PR; empty shows null.
	MergeCommitSHA string
	HeadRef        string
	HeadSHA        string
	// HeadRepo is the head repository as "owner/name"; empty means this repository. Any other
	// value makes the pull request come from a fork.
	HeadRepo string
	// BaseRef defaults to the default branch; BaseSHA to BaseRef's head.
	BaseRef string
	BaseSHA string
	Labels  []string
	// Files are the paths the pull request changes; empty lists one README.md change.
	Files []string
	// Mergeable is what GitHub computed: nil shows true for an open pull request with a merge
	// commit and null (not computed yet) otherwise.
	Mergeable *bool
}

type pull struct {
	PullRequestSpec
	id        int64
	createdAt time.Time
	updatedAt time.Time
	closedAt  time.Time
	mergedAt  time.Time
	timeline  []headEvent // pushes of the head, oldest first; see timeline.go
	reviews   []*review   // see reviews.go
}

// AddPullRequest opens (or records) a pull request and returns its number.
func (s *Server) AddPullRequest(fullName string, spec PullRequestSpec) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return 0, err
	}
	return s.addPull(rp, spec)
}

// addPull opens a pull request on rp, under the lock.
func (s *Server) addPull(rp *repo, spec PullRequestSpec) (int, error) {
	if spec.Number == 0 {
		spec.Number = rp.lastNumber + 1
	}
	if _, ok := rp.pulls[spec.Number]; ok {
		return 0, alreadyExists("pull request %s already exists", describe(rp, spec.Number))
	}
	if err := s.normalizePull(rp, &spec); err != nil {
		return 0, err
	}
	now := s.clock.Now()
	p := &pull{PullRequestSpec: spec, id: s.nextID(), createdAt: now}
	p.timeline = []headEvent{{commit: spec.HeadSHA, at: now}}
	s.touchPull(rp, p, now)
	rp.pulls[spec.Number] = p
	rp.lastNumber = max(rp.lastNumber, spec.Number)
	return spec.Number, nil
}

// UpdatePullRequest changes a pull request: update receives its current spec to edit. The
// number cannot change. Closing or merging stamps closed_at and merged_at from the clock. A new
// HeadSHA is a plain push of that commit onto the head branch (a PullRequestCommit in the
// timeline); ForcePushPullRequest records a force-push instead.
func (s *Server) UpdatePullRequest(fullName string, number int, update func(*PullRequestSpec)) error {
	return s.updatePull(fullName, number, update, false)
}

func (s *Server) updatePull(fullName string, number int, update func(*PullRequestSpec), force bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return err
	}
	p, ok := rp.pulls[number]
	if !ok {
		return notFound("pull request %s", describe(rp, number))
	}
	spec := p.PullRequestSpec
	spec.Labels = slices.Clone(spec.Labels)
	update(&spec)
	spec.Number = number
	if err := s.normalizePull(rp, &spec); err != nil {
		return err
	}
	now := s.clock.Now()
	if before := p.HeadSHA; before != spec.HeadSHA {
		ev := headEvent{commit: spec.HeadSHA, at: now}
		if force {
			ev = headEvent{force: true, before: before, after: spec.HeadSHA, at: now}
		}
		p.timeline = append(p.timeline, ev)
	}
	p.PullRequestSpec = spec
	s.touchPull(rp, p, now)
	return nil
}

func (s *Server) normalizePull(rp *repo, spec *PullRequestSpec) error {
	if spec.Number < 1 {
		return invalid("pull request number %d must be positive", spec.Number)
	}
	if spec.Author == "" {
		spec.Author = rp.Owner
	}
	if spec.State == "" {
		spec.State = "open"
	}
	if spec.State != "open" && spec.State != "closed" {
		return invalid("pull request %s: state %q, want open or closed", describe(rp, spec.Number), spec.State)
	}
	if spec.Merged && spec.State != "closed" {
		return invalid("pull request %s: a merged pull request must be closed", describe(rp, spec.Number))
	}
	if spec.HeadRef == "" {
		return invalid("pull request %s: HeadRef is required", describe(rp, spec.Number))
	}
	if err := validSHA("HeadSHA", spec.HeadSHA); err != nil {
		return err
	}
	if spec.MergeCommitSHA != "" {
		if err := validSHA("MergeCommitSHA", spec.MergeCommitSHA); err != nil {
			return err
		}
	}
	if spec.HeadRepo != "" && !strings.Contains(spec.HeadRepo, "/") {
		return invalid("pull request %s: HeadRepo %q, want owner/name", describe(rp, spec.Number), spec.HeadRepo)
	}
	if strings.EqualFold(spec.HeadRepo, rp.FullName()) {
		spec.HeadRepo = ""
	}
	if err := rp.branchHead("BaseSHA", &spec.BaseRef, &spec.BaseSHA); err != nil {
		return err
	}
	for _, l := range spec.Labels {
		if l == "" {
			return invalid("pull request %s: empty label", describe(rp, spec.Number))
		}
	}
	return nil
}

// touchPull records the side effects of a pull request's new state.
func (s *Server) touchPull(rp *repo, p *pull, now time.Time) {
	p.updatedAt = now
	if p.State == "closed" && p.closedAt.IsZero() {
		p.closedAt = now
	}
	if p.State == "open" {
		p.closedAt = time.Time{}
	}
	if p.Merged && p.mergedAt.IsZero() {
		p.mergedAt = now
	}
	if p.HeadRepo == "" {
		rp.branches[p.HeadRef] = p.HeadSHA
	}
	s.recordMergeCommit(rp, p)
	s.userFor(p.Author)
	for _, l := range p.Labels {
		if _, ok := rp.labelIDs[strings.ToLower(l)]; !ok {
			rp.labelIDs[strings.ToLower(l)] = s.nextID()
		}
	}
}

type labelJSON struct {
	ID          int64   `json:"id"`
	NodeID      string  `json:"node_id"`
	URL         string  `json:"url"`
	Name        string  `json:"name"`
	Color       string  `json:"color"`
	Default     bool    `json:"default"`
	Description *string `json:"description"`
}

type branchJSON struct {
	Label string   `json:"label"`
	Ref   string   `json:"ref"`
	SHA   string   `json:"sha"`
	User  userJSON `json:"user"`
	Repo  repoJSON `json:"repo"`
}

type pullJSON struct {
	URL               string      `json:"url"`
	ID                int64       `json:"id"`
	NodeID            string      `json:"node_id"`
	HTMLURL           string      `json:"html_url"`
	IssueURL          string      `json:"issue_url"`
	Number            int         `json:"number"`
	State             string      `json:"state"`
	Locked            bool        `json:"locked"`
	Title             string      `json:"title"`
	User              userJSON    `json:"user"`
	Body              *string     `json:"body"`
	Labels            []labelJSON `json:"labels"`
	CreatedAt         string      `json:"created_at"`
	UpdatedAt         string      `json:"updated_at"`
	ClosedAt          *string     `json:"closed_at"`
	MergedAt          *string     `json:"merged_at"`
	MergeCommitSHA    *string     `json:"merge_commit_sha"`
	Draft             bool        `json:"draft"`
	Head              branchJSON  `json:"head"`
	Base              branchJSON  `json:"base"`
	AuthorAssociation string      `json:"author_association"`
	Merged            bool        `json:"merged"`
	Mergeable         *bool       `json:"mergeable"`
	MergeableState    string      `json:"mergeable_state"`
}

func (s *Server) pullJSON(c *call, rp *repo, p *pull) pullJSON {
	labels := []labelJSON{}
	for _, l := range p.Labels {
		id := rp.labelIDs[strings.ToLower(l)]
		labels = append(labels, labelJSON{
			ID: id, NodeID: nodeID("LA", id), URL: c.repoAPIURL(rp) + "/labels/" + l, Name: l, Color: "ededed",
		})
	}
	mergeable, state := p.mergeability()
	base := s.repoJSON(rp)
	head := base
	if p.HeadRepo != "" {
		head = s.forkJSON(p.HeadRepo, rp)
	}
	return pullJSON{
		URL: c.repoAPIURL(rp) + "/pulls/" + itoa(int64(p.Number)), ID: p.id, NodeID: nodeID("PR", p.id),
		HTMLURL:  s.webURL + "/" + rp.FullName() + "/pull/" + itoa(int64(p.Number)),
		IssueURL: c.repoAPIURL(rp) + "/issues/" + itoa(int64(p.Number)),
		Number:   p.Number, State: p.State, Title: p.Title, User: s.userJSON(p.Author), Labels: labels,
		CreatedAt: stamp(p.createdAt), UpdatedAt: stamp(p.updatedAt),
		ClosedAt: stampOrNull(p.closedAt), MergedAt: stampOrNull(p.mergedAt),
		MergeCommitSHA: strOrNull(p.MergeCommitSHA), Draft: p.Draft,
		Head:              branchJSON{Label: head.Owner.Login + ":" + p.HeadRef, Ref: p.HeadRef, SHA: p.HeadSHA, User: head.Owner, Repo: head},
		Base:              branchJSON{Label: base.Owner.Login + ":" + p.BaseRef, Ref: p.BaseRef, SHA: p.BaseSHA, User: base.Owner, Repo: base},
		AuthorAssociation: rp.association(p.Author), Merged: p.Merged,
		Mergeable: mergeable, MergeableState: state,
	}
}

// mergeability is what GitHub shows of a pull request's merge: mergeable (null while it is
// being computed, and for a closed pull request) and the matching mergeable_state.
func (p *pull) mergeability() (*bool, string) {
	m := p.Mergeable
	if m == nil && p.State == "open" && p.MergeCommitSHA != "" {
		t := true
		m = &t
	}
	switch {
	case p.State != "open" || m == nil:
		return nil, "unknown"
	case *m:
		return m, "clean"
	}
	return m, "dirty"
}

// forkJSON shows a pull request's head repository that is not this one: a registered
// repository as itself, anything else as a fork of base.
func (s *Server) forkJSON(fullName string, base *repo) repoJSON {
	owner, name, _ := strings.Cut(fullName, "/")
	if rp, ok := s.repos[repoKey(owner, name)]; ok {
		j := s.repoJSON(rp)
		j.Fork = true
		return j
	}
	id := s.stableID("repo:" + strings.ToLower(fullName))
	return repoJSON{
		ID: id, NodeID: nodeID("R", id), Name: name, FullName: fullName, Private: base.Private,
		Owner: s.userJSON(owner), HTMLURL: s.webURL + "/" + fullName,
		URL: "https://api.github.com/repos/" + fullName, Fork: true, DefaultBranch: base.DefaultBranch,
	}
}

// pull finds the pull request the path names: its repository, number and record.
func (c *call) pull() (*repo, int64, *pull, error) {
	rp, n, err := c.repoAndID("pull_number")
	if err != nil {
		return nil, 0, nil, err
	}
	p, ok := rp.pulls[int(n)]
	if !ok {
		return nil, 0, nil, notFound("pull request %s", describe(rp, int(n)))
	}
	return rp, n, p, nil
}

func (s *Server) getPullRequest(c *call) error {
	rp, _, p, err := c.pull()
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusOK, s.pullJSON(c, rp, p))
	return nil
}

// fileJSON is one entry of GET /repos/{owner}/{repo}/pulls/{n}/files.
type fileJSON struct {
	SHA       string `json:"sha"`
	Filename  string `json:"filename"`
	Status    string `json:"status"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Changes   int    `json:"changes"`
}

// listPullRequestFiles serves the changed files of a pull request, paginated.
func (s *Server) listPullRequestFiles(c *call) error {
	_, _, p, err := c.pull()
	if err != nil {
		return err
	}
	files := p.Files
	if len(files) == 0 {
		files = []string{"README.md"}
	}
	out := make([]fileJSON, 0, len(files))
	for _, f := range files {
		out = append(out, fileJSON{SHA: p.HeadSHA, Filename: f, Status: "modified", Additions: 1, Deletions: 1, Changes: 2})
	}
	c.writeJSON(http.StatusOK, paginate(c, out))
	return nil
}

// IssueComment is a comment on a pull request, as the inspection API returns it.
type IssueComment struct {
	ID        int64
	Number    int
	Author    string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

type comment struct {
	IssueComment
}

// AddIssueComment posts a comment by author on pull request number and returns its id.
func (s *Server) AddIssueComment(fullName string, number int, author, body string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return 0, err
	}
	cm, err := s.addComment(rp, number, author, body, s.clock.Now())
	if err != nil {
		return 0, err
	}
	return cm.ID, nil
}

func (s *Server) addComment(rp *repo, number int, author, body string, now time.Time) (*comment, error) {
	if _, ok := rp.pulls[number]; !ok {
		return nil, notFound("issue %s", describe(rp, number))
	}
	if body == "" {
		return nil, invalid("comment body must not be empty")
	}
	if author == "" {
		return nil, invalid("comment author must not be empty")
	}
	s.userFor(author)
	cm := &comment{IssueComment{ID: s.nextID(), Number: number, Author: author, Body: body, CreatedAt: now, UpdatedAt: now}}
	rp.comments = append(rp.comments, cm)
	return cm, nil
}

// IssueComments returns the comments on pull request number, oldest first.
func (s *Server) IssueComments(fullName string, number int) ([]IssueComment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return nil, err
	}
	var out []IssueComment
	for _, cm := range rp.comments {
		if cm.Number == number {
			out = append(out, cm.IssueComment)
		}
	}
	return out, nil
}

type commentJSON struct {
	ID                int64    `json:"id"`
	NodeID            string   `json:"node_id"`
	URL               string   `json:"url"`
	HTMLURL           string   `json:"html_url"`
	IssueURL          string   `json:"issue_url"`
	Body              string   `json:"body"`
	User              userJSON `json:"user"`
	CreatedAt         string   `json:"created_at"`
	UpdatedAt         string   `json:"updated_at"`
	AuthorAssociation string   `json:"author_association"`
}

func (s *Server) commentJSON(c *call, rp *repo, cm *comment) commentJSON {
	return commentJSON{
		ID: cm.ID, NodeID: nodeID("IC", cm.ID), URL: c.repoAPIURL(rp) + "/issues/comments/" + itoa(cm.ID),
		HTMLURL:  s.webURL + "/" + rp.FullName() + "/pull/" + itoa(int64(cm.Number)) + "#issuecomment-" + itoa(cm.ID),
		IssueURL: c.repoAPIURL(rp) + "/issues/" + itoa(int64(cm.Number)),
		Body:     cm.Body, User: s.userJSON(cm.Author),
		CreatedAt: stamp(cm.CreatedAt), UpdatedAt: stamp(cm.UpdatedAt), AuthorAssociation: rp.association(cm.Author),
	}
}

func (s *Server) listIssueComments(c *call) error {
	rp, n, err := c.repoAndID("issue_number")
	if err != nil {
		return err
	}
	if _, ok := rp.pulls[int(n)]; !ok {
		return notFound("issue %s", describe(rp, int(n)))
	}
	var since time.Time
	if v := c.r.URL.Query().Get("since"); v != "" {
		if since, err = time.Parse(time.RFC3339, v); err != nil {
			return invalid("since %q is not an ISO 8601 timestamp (YYYY-MM-DDTHH:MM:SSZ)", v)
		}
	}
	var matched []*comment
	for _, cm := range rp.comments {
		if cm.Number == int(n) && !cm.UpdatedAt.Before(since) {
			matched = append(matched, cm)
		}
	}
	out := []commentJSON{}
	for _, cm := range paginate(c, matched) {
		out = append(out, s.commentJSON(c, rp, cm))
	}
	c.writeJSON(http.StatusOK, out)
	return nil
}

func (s *Server) createIssueComment(c *call) error {
	rp, n, err := c.repoAndID("issue_number")
	if err != nil {
		return err
	}
	var req struct {
		Body *string `json:"body"`
	}
	if err := c.decode(&req); err != nil {
		return err
	}
	if req.Body == nil {
		return invalid(`Invalid request. "body" wasn't supplied.`)
	}
	cm, err := s.addComment(rp, int(n), c.who.Login, *req.Body, c.now)
	if err != nil {
		return err
	}
	c.writeJSON(http.StatusCreated, s.commentJSON(c, rp, cm))
	return nil
}
