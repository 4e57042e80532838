package githubsim

import (
	"net/http"
	"strings"
)

// Commit trees: the git data API's view of a commit (GET
// /repos/{o}/{r}/git/commits/{sha}), enough for the tree key of a gate. A
// scenario registers the commits it reads; two merge commits given the same
// tree are what a re-push with an identical merge tree produces (an amended
// message, a rebase with no change, an unrelated base commit).

// SetCommitTree records that commit sha of a repository has tree tree. An
// unregistered commit answers 404, as an unknown SHA does on GitHub.
func (s *Server) SetCommitTree(fullName, sha, tree string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return err
	}
	if err := validSHA("commit", sha); err != nil {
		return err
	}
	if err := validSHA("tree", tree); err != nil {
		return err
	}
	if s.commitTrees == nil {
		s.commitTrees = map[string]string{}
	}
	s.commitTrees[strings.ToLower(rp.FullName())+"@"+sha] = tree
	return nil
}

type gitCommitJSON struct {
	SHA  string `json:"sha"`
	URL  string `json:"url"`
	Tree struct {
		SHA string `json:"sha"`
		URL string `json:"url"`
	} `json:"tree"`
	Message string `json:"message"`
}

func (s *Server) getGitCommit(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	sha := c.r.PathValue("commit_sha")
	tree, ok := s.commitTrees[strings.ToLower(rp.FullName())+"@"+sha]
	if !ok {
		return notFound("commit %s", sha)
	}
	var out gitCommitJSON
	out.SHA, out.URL = sha, c.repoAPIURL(rp)+"/git/commits/"+sha
	out.Tree.SHA, out.Tree.URL = tree, c.repoAPIURL(rp)+"/git/trees/"+tree
	out.Message = "Merge into the base"
	c.writeJSON(http.StatusOK, out)
	return nil
}
