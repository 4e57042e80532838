package githubsim

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// Commits: the git data API's view of a commit (GET
// /repos/{o}/{r}/git/commits/{sha}), enough for the tree key of a gate and for
// checking what a pull request's merge commit merges. A scenario registers the
// trees it reads; two merge commits given the same tree are what a re-push with
// an identical merge tree produces (an amended message, a rebase with no
// change, an unrelated base commit). A pull request's merge commit is recorded
// when it first appears, with parents (base, head) as GitHub computed it then:
// a commit never changes, so a merge commit GitHub has not recomputed after a
// push keeps the parents of the head it was made for.

// gitCommit is what the simulator knows of one commit.
type gitCommit struct {
	tree    string   // "" until SetCommitTree; the answer then derives one from the SHA
	parents []string // nil until the commit is recorded with parents
}

func commitKey(rp *repo, sha string) string { return strings.ToLower(rp.FullName()) + "@" + sha }

// SetCommitTree records that commit sha of a repository has tree tree. An
// unregistered commit answers 404, as an unknown SHA does on GitHub.
func (s *Server) SetCommitTree(fullName, sha, tree string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoWithSHAs(fullName, "commit", sha, "tree", tree)
	if err != nil {
		return err
	}
	s.commitFor(rp, sha).tree = tree
	return nil
}

// SetCommitParents records the parents of commit sha (for a merge commit: the
// base, then the merged head). A pull request's merge commit gets (base, head)
// by itself when it first appears; this overrides that.
func (s *Server) SetCommitParents(fullName, sha string, parents ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	shas := []string{"commit", sha}
	for _, p := range parents {
		shas = append(shas, "parent", p)
	}
	rp, err := s.repoWithSHAs(fullName, shas...)
	if err != nil {
		return err
	}
	s.commitFor(rp, sha).parents = append([]string{}, parents...)
	return nil
}

// repoWithSHAs is the repository fullName names once every SHA of
// fieldsAndSHAs (field, sha, field, sha, …) is a full commit SHA; the caller
// holds s.mu.
func (s *Server) repoWithSHAs(fullName string, fieldsAndSHAs ...string) (*repo, error) {
	rp, err := s.repoByName(fullName)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(fieldsAndSHAs); i += 2 {
		if err := validSHA(fieldsAndSHAs[i], fieldsAndSHAs[i+1]); err != nil {
			return nil, err
		}
	}
	return rp, nil
}

func (s *Server) commitFor(rp *repo, sha string) *gitCommit {
	if s.commits == nil {
		s.commits = map[string]*gitCommit{}
	}
	k := commitKey(rp, sha)
	if s.commits[k] == nil {
		s.commits[k] = &gitCommit{}
	}
	return s.commits[k]
}

// recordMergeCommit records a pull request's merge commit the first time it
// appears, merging the head into the base as they are now.
func (s *Server) recordMergeCommit(rp *repo, p *pull) {
	if p.MergeCommitSHA == "" {
		return
	}
	if c := s.commitFor(rp, p.MergeCommitSHA); c.parents == nil {
		c.parents = []string{p.BaseSHA, p.HeadSHA}
	}
}

type commitRefJSON struct {
	SHA     string `json:"sha"`
	URL     string `json:"url"`
	HTMLURL string `json:"html_url"`
}

type gitCommitJSON struct {
	SHA  string `json:"sha"`
	URL  string `json:"url"`
	Tree struct {
		SHA string `json:"sha"`
		URL string `json:"url"`
	} `json:"tree"`
	Message string          `json:"message"`
	Parents []commitRefJSON `json:"parents"`
}

func (s *Server) getGitCommit(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	sha := c.r.PathValue("commit_sha")
	commit, ok := s.commits[commitKey(rp, sha)]
	if !ok {
		return notFound("commit %s", sha)
	}
	tree := commit.tree
	if tree == "" { // a commit whose files no scenario named: a tree of its own
		sum := sha256.Sum256([]byte("tree of " + sha))
		tree = hex.EncodeToString(sum[:20])
	}
	var out gitCommitJSON
	out.SHA, out.URL = sha, c.repoAPIURL(rp)+"/git/commits/"+sha
	out.Tree.SHA, out.Tree.URL = tree, c.repoAPIURL(rp)+"/git/trees/"+tree
	out.Message = "Merge into the base"
	out.Parents = []commitRefJSON{}
	for _, p := range commit.parents {
		out.Parents = append(out.Parents, commitRefJSON{SHA: p, URL: c.repoAPIURL(rp) + "/git/commits/" + p,
			HTMLURL: s.webURL + "/" + rp.FullName() + "/commit/" + p})
	}
	c.writeJSON(http.StatusOK, out)
	return nil
}

// SetCompareFiles records the files that change from commit base to commit
// head, as GET /repos/{o}/{r}/compare/{base}...{head} lists them. An
// unrecorded pair answers 404, as commits GitHub does not know do.
func (s *Server) SetCompareFiles(fullName, base, head string, files []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoWithSHAs(fullName, "base", base, "head", head)
	if err != nil {
		return err
	}
	if s.compares == nil {
		s.compares = map[string][]string{}
	}
	s.compares[commitKey(rp, base+"..."+head)] = append([]string{}, files...)
	return nil
}

type compareJSON struct {
	URL          string     `json:"url"`
	HTMLURL      string     `json:"html_url"`
	Status       string     `json:"status"`
	AheadBy      int        `json:"ahead_by"`
	BehindBy     int        `json:"behind_by"`
	TotalCommits int        `json:"total_commits"`
	Commits      []any      `json:"commits"`
	Files        []fileJSON `json:"files"`
}

func (s *Server) compareCommits(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	basehead := c.r.PathValue("basehead")
	_, head, ok := strings.Cut(basehead, "...")
	files, known := s.compares[commitKey(rp, basehead)]
	if !ok || !known {
		return notFound("comparison %s", basehead)
	}
	out := compareJSON{URL: c.repoAPIURL(rp) + "/compare/" + basehead, HTMLURL: s.webURL + "/" + rp.FullName() + "/compare/" + basehead,
		Status: "ahead", AheadBy: 1, TotalCommits: 1, Commits: []any{}, Files: []fileJSON{}}
	for _, f := range files {
		out.Files = append(out.Files, fileJSON{SHA: head, Filename: f, Status: "modified", Additions: 1, Deletions: 1, Changes: 2})
	}
	c.writeJSON(http.StatusOK, out)
	return nil
}
