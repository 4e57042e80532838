package githubsim

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Repo is a repository in the simulation.
type Repo struct {
	Owner string
	Name  string
	// DefaultBranch defaults to "main".
	DefaultBranch string
	// DefaultBranchSHA is the default branch's head; a seeded SHA when empty.
	DefaultBranchSHA string
	Private          bool
}

// FullName is "owner/name".
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

type repo struct {
	Repo
	id         int64
	branches   map[string]string // branch → head SHA
	roles      map[string]role   // lower-case login → role
	labelIDs   map[string]int64
	pulls      map[int]*pull
	comments   []*comment
	workflows  []*workflow
	lastNumber int
}

type user struct {
	id    int64
	login string
}

// role is a repository role: its name as role_name shows it and the base permission
// (admin|write|read|none) that the permission field shows.
type role struct {
	name       string
	permission string
}

// builtinRoles maps GitHub's repository roles to the coarse permission the API reports:
// maintain shows as write and triage as read.
var builtinRoles = map[string]string{
	"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "none": "none",
}

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
	shaPattern  = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

func repoKey(owner, name string) string { return strings.ToLower(owner + "/" + name) }

// AddRepo adds a repository; its owner becomes a user with the admin role.
func (s *Server) AddRepo(r Repo) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !namePattern.MatchString(r.Owner) || !namePattern.MatchString(r.Name) {
		return invalid("repository %q: owner and name must be non-empty and use only letters, digits, '.', '_' and '-'", r.FullName())
	}
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	if r.DefaultBranchSHA == "" {
		r.DefaultBranchSHA = s.randomSHA()
	}
	if !shaPattern.MatchString(r.DefaultBranchSHA) {
		return invalid("repository %q: DefaultBranchSHA %q is not a 40-character lower-case hex SHA", r.FullName(), r.DefaultBranchSHA)
	}
	key := repoKey(r.Owner, r.Name)
	if _, ok := s.repos[key]; ok {
		return alreadyExists("repository %q already exists", r.FullName())
	}
	s.repos[key] = &repo{
		Repo:     r,
		id:       s.nextID(),
		branches: map[string]string{r.DefaultBranch: r.DefaultBranchSHA},
		roles:    map[string]role{strings.ToLower(r.Owner): {name: "admin", permission: "admin"}},
		labelIDs: map[string]int64{},
		pulls:    map[int]*pull{},
	}
	s.userFor(r.Owner)
	return nil
}

func (s *Server) randomSHA() string {
	const hex = "0123456789abcdef"
	b := make([]byte, 40)
	for i := range b {
		b[i] = hex[s.secrets.IntN(16)]
	}
	return string(b)
}

// SetBranch points branch at sha, creating the branch if needed.
func (s *Server) SetBranch(fullName, branch, sha string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return err
	}
	if branch == "" || !shaPattern.MatchString(sha) {
		return invalid("branch %q: need a name and a 40-character lower-case hex SHA, got %q", branch, sha)
	}
	rp.branches[branch] = sha
	return nil
}

// SetRole gives login a built-in repository role: admin, maintain, write, triage, read or none.
func (s *Server) SetRole(fullName, login, roleName string) error {
	perm, ok := builtinRoles[roleName]
	if !ok {
		return invalid("role %q: want admin, maintain, write, triage, read or none (or use SetCustomRole)", roleName)
	}
	return s.setRole(fullName, login, role{name: roleName, permission: perm})
}

// SetCustomRole gives login an organization-defined role whose base permission is
// admin, write, read or none; role_name then shows roleName.
func (s *Server) SetCustomRole(fullName, login, roleName, basePermission string) error {
	switch basePermission {
	case "admin", "write", "read", "none":
	default:
		return invalid("base permission %q: want admin, write, read or none", basePermission)
	}
	if roleName == "" {
		return invalid("custom role name must not be empty")
	}
	return s.setRole(fullName, login, role{name: roleName, permission: basePermission})
}

func (s *Server) setRole(fullName, login string, r role) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp, err := s.repoByName(fullName)
	if err != nil {
		return err
	}
	if !namePattern.MatchString(strings.TrimSuffix(login, "[bot]")) {
		return invalid("login %q is not a valid GitHub login", login)
	}
	s.userFor(login)
	rp.roles[strings.ToLower(login)] = r
	return nil
}

// userFor returns the user with login, creating it on first use.
func (s *Server) userFor(login string) *user {
	key := strings.ToLower(login)
	if u, ok := s.users[key]; ok {
		return u
	}
	u := &user{id: s.nextID(), login: login}
	s.users[key] = u
	return u
}

func (s *Server) userJSON(login string) userJSON {
	u := s.userFor(login)
	kind := "User"
	if strings.HasSuffix(u.login, "[bot]") {
		kind = "Bot"
	}
	return userJSON{
		Login: u.login, ID: u.id, NodeID: nodeID("U", u.id), Type: kind,
		URL: "https://api.github.com/users/" + u.login, HTMLURL: s.webURL + "/" + u.login,
	}
}

func (s *Server) repoJSON(rp *repo) repoJSON {
	return repoJSON{
		ID: rp.id, NodeID: nodeID("R", rp.id), Name: rp.Name, FullName: rp.FullName(), Private: rp.Private,
		Owner: s.userJSON(rp.Owner), HTMLURL: s.webURL + "/" + rp.FullName(),
		URL: "https://api.github.com/repos/" + rp.FullName(), DefaultBranch: rp.DefaultBranch,
	}
}

// repoByName finds a repository by "owner/name" for the programmatic API.
func (s *Server) repoByName(fullName string) (*repo, error) {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok {
		return nil, invalid("repository %q: want owner/name", fullName)
	}
	rp, ok := s.repos[repoKey(owner, name)]
	if !ok {
		return nil, notFound("repository %q", fullName)
	}
	return rp, nil
}

// repo finds the repository an API path names.
func (c *call) repo() (*repo, error) {
	rp, ok := c.s.repos[repoKey(c.r.PathValue("owner"), c.r.PathValue("repo"))]
	if !ok {
		return nil, notFound("repository %s/%s", c.r.PathValue("owner"), c.r.PathValue("repo"))
	}
	if err := c.inScope(rp); err != nil {
		return nil, err
	}
	return rp, nil
}

// repoAPIURL is the API URL of a repository as this caller reaches the server.
func (c *call) repoAPIURL(rp *repo) string { return c.apiURL + "/repos/" + rp.FullName() }

func pathInt(c *call, name string) (int64, error) {
	v, err := strconv.ParseInt(c.r.PathValue(name), 10, 64)
	if err != nil || v < 1 {
		return 0, notFound("%s %q is not a positive integer", name, c.r.PathValue(name))
	}
	return v, nil
}

// permissionOf is a user's role in a repository. Users without one read public repositories
// and see nothing of private ones.
func (rp *repo) permissionOf(login string) role {
	if r, ok := rp.roles[strings.ToLower(login)]; ok {
		return r
	}
	if rp.Private {
		return role{name: "none", permission: "none"}
	}
	return role{name: "read", permission: "read"}
}

// association is the author_association GitHub shows for login's comments in rp.
func (rp *repo) association(login string) string {
	if strings.EqualFold(login, rp.Owner) {
		return "OWNER"
	}
	if r, ok := rp.roles[strings.ToLower(login)]; ok && r.permission != "none" {
		return "COLLABORATOR"
	}
	return "NONE"
}

type permissionJSON struct {
	Permission string   `json:"permission"`
	RoleName   string   `json:"role_name"`
	User       userJSON `json:"user"`
}

func (s *Server) getPermission(c *call) error {
	rp, err := c.repo()
	if err != nil {
		return err
	}
	login := c.r.PathValue("username")
	if _, ok := s.users[strings.ToLower(login)]; !ok {
		return notFound("%s is not a user", login)
	}
	r := rp.permissionOf(login)
	c.writeJSON(http.StatusOK, permissionJSON{Permission: r.permission, RoleName: r.name, User: s.userJSON(login)})
	return nil
}

// resolveRef turns a branch name (optionally refs/heads/…) or a SHA into a SHA.
func (rp *repo) resolveRef(ref string) string {
	if sha, ok := rp.branches[strings.TrimPrefix(ref, "refs/heads/")]; ok {
		return sha
	}
	return ref
}

func validSHA(field, sha string) error {
	if !shaPattern.MatchString(sha) {
		return invalid("%s %q is not a 40-character lower-case hex SHA", field, sha)
	}
	return nil
}

// branchHead fills an empty branch with the default branch and an empty sha
// with the branch's head, then checks the sha, named field in the error.
func (rp *repo) branchHead(field string, branch, sha *string) error {
	if *branch == "" {
		*branch = rp.DefaultBranch
	}
	if *sha == "" {
		*sha = rp.branches[*branch]
	}
	return validSHA(field, *sha)
}

func describe(rp *repo, number int) string { return fmt.Sprintf("%s#%d", rp.FullName(), number) }
