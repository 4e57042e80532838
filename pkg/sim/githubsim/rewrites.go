package githubsim

import "path"

// Rewrite replaces the answer of requests the simulation handled: the
// request took effect, and the client receives another body (and status).
// It models a wrong-but-valid answer, such as another run's record for
// GET …/actions/runs/{id}, that a client must not take at face value.
// Faults, authentication failures and rate limits are answered before a
// handler runs and are never rewritten.
type Rewrite struct {
	// Method matches the request method; empty matches any.
	Method string
	// Path matches the URL path in path.Match syntax ("/repos/*/*/actions/runs/*"); empty matches any.
	Path string
	// Skip lets this many matching answers through before the rule starts rewriting them.
	Skip int
	// Times is how many answers the rule rewrites; 0 means every matching answer.
	Times int
	// Status, when set, replaces the answer's status.
	Status int
	// Body receives the status and body the simulation answered and returns
	// the body to send instead (as is, with the same headers); nil keeps the body.
	// It runs under the server's lock: it must not call the server.
	Body func(status int, body []byte) []byte
}

type rewriteRule struct {
	Rewrite
	seen    int
	applied int
}

// AddRewrite installs a rewrite rule; the first rule that fires rewrites an answer.
func (s *Server) AddRewrite(r Rewrite) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rewrites = append(s.rewrites, &rewriteRule{Rewrite: r})
}

// rewriteAnswer applies the first rewrite rule that fires to c's handled answer.
func (s *Server) rewriteAnswer(c *call) {
	for _, rw := range s.rewrites {
		if rw.Method != "" && rw.Method != c.r.Method {
			continue
		}
		if rw.Path != "" {
			if ok, _ := path.Match(rw.Path, c.r.URL.Path); !ok {
				continue
			}
		}
		rw.seen++
		if rw.seen <= rw.Skip || (rw.Times > 0 && rw.applied >= rw.Times) {
			continue
		}
		rw.applied++
		if rw.Body != nil {
			c.out = rw.Body(c.status, c.out)
		}
		if rw.Status != 0 {
			c.status = rw.Status
		}
		return
	}
}
