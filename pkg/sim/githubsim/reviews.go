package githubsim

import (
	"net/http"
	"slices"
	"time"
)

// Pull request reviews (GET /repos/{o}/{r}/pulls/{n}/reviews): who reviewed,
// with which verdict, at which commit. A review is bound to the head it was
// submitted on (commit_id), so an approval names exactly what was read.

// ReviewSpec is a submitted review for AddReview.
type ReviewSpec struct {
	Author string
	// State is APPROVED, CHANGES_REQUESTED, COMMENTED or DISMISSED.
	State string
	// CommitID is the head the review was submitted on; empty means the current head.
	CommitID string
	Body     string
}

type review struct {
	ReviewSpec
	id          int64
	submittedAt time.Time
}

var reviewStates = []string{"APPROVED", "CHANGES_REQUESTED", "COMMENTED", "DISMISSED"}

// AddReview submits a review on pull request number and returns its id.
func (s *Server) AddReview(fullName string, number int, spec ReviewSpec) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return 0, err
	}
	p, ok := rp.pulls[number]
	if !ok {
		return 0, notFound("pull request %s", describe(rp, number))
	}
	if spec.Author == "" {
		return 0, invalid("review author must not be empty")
	}
	if !slices.Contains(reviewStates, spec.State) {
		return 0, invalid("review state %q, want one of %v", spec.State, reviewStates)
	}
	if spec.CommitID == "" {
		spec.CommitID = p.HeadSHA
	}
	if err := validSHA("CommitID", spec.CommitID); err != nil {
		return 0, err
	}
	s.userFor(spec.Author)
	r := &review{ReviewSpec: spec, id: s.nextID(), submittedAt: s.clock.Now()}
	p.reviews = append(p.reviews, r)
	return r.id, nil
}

type reviewJSON struct {
	ID                int64    `json:"id"`
	NodeID            string   `json:"node_id"`
	User              userJSON `json:"user"`
	Body              string   `json:"body"`
	State             string   `json:"state"`
	HTMLURL           string   `json:"html_url"`
	PullRequestURL    string   `json:"pull_request_url"`
	AuthorAssociation string   `json:"author_association"`
	SubmittedAt       string   `json:"submitted_at"`
	CommitID          string   `json:"commit_id"`
}

// listPullRequestReviews serves a pull request's reviews, oldest first, paginated.
func (s *Server) listPullRequestReviews(c *call) error {
	rp, n, p, err := c.pull()
	if err != nil {
		return err
	}
	out := []reviewJSON{}
	for _, r := range paginate(c, p.reviews) {
		pullURL := s.webURL + "/" + rp.FullName() + "/pull/" + itoa(n)
		out = append(out, reviewJSON{
			ID: r.id, NodeID: nodeID("PRR", r.id), User: s.userJSON(r.Author), Body: r.Body, State: r.State,
			HTMLURL: pullURL + "#pullrequestreview-" + itoa(r.id), PullRequestURL: c.repoAPIURL(rp) + "/pulls/" + itoa(n),
			AuthorAssociation: rp.association(r.Author), SubmittedAt: stamp(r.submittedAt), CommitID: r.CommitID,
		})
	}
	c.writeJSON(http.StatusOK, out)
	return nil
}
