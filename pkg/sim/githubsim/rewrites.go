package githubsim

// Rewrite replaces the answer of matching requests after the simulation
// handled them, so the request takes effect but its caller sees another
// answer: a wrong-but-valid document such as a pull request without a state.
// Only successful (2xx) answers are rewritten; faults and errors pass as they are.
type Rewrite struct {
	// Method matches the request method; empty matches any.
	Method string
	// Path matches the URL path in path.Match syntax; empty matches any.
	Path string
	// Skip lets this many matching answers through before the rule rewrites.
	Skip int
	// Times is how many answers the rule rewrites; 0 means every matching one.
	Times int
	// Status, when set, replaces the answer's status.
	Status int
	// Body receives the status and body the simulator would have sent and
	// returns the body to send instead (same headers).
	Body func(status int, body []byte) []byte
}

type rewriteRule struct {
	Rewrite
	ruleCount
}

// AddRewrite installs a rewrite rule; the first rule that fires rewrites an answer.
func (s *Server) AddRewrite(r Rewrite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rewrites = append(s.rewrites, &rewriteRule{Rewrite: r})
}

// rewriteAnswer applies the first rewrite rule that fires to c's answer; the
// caller holds s.mu.
func (s *Server) rewriteAnswer(c *call) {
	if c.status < 200 || c.status > 299 {
		return
	}
	for _, r := range s.rewrites {
		if !r.eligible(c.r, r.Method, r.Path, r.Skip, r.Times) {
			continue
		}
		r.acted++
		if r.Body != nil {
			c.out = r.Body(c.status, c.out)
		}
		if r.Status != 0 {
			c.status = r.Status
		}
		return
	}
}
