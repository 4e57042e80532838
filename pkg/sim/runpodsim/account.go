package runpodsim

import (
	"net/http"
	"slices"
	"time"
)

// WithSSHKeys sets the SSH public keys registered on the simulated account
// (GET /v2/account/ssh-keys); by default it has none.
func WithSSHKeys(keys ...string) Option {
	return func(c *config) { c.sshKeys = slices.Clone(keys) }
}

// SSHKeys returns the account's registered SSH public keys as they are now,
// so tests can check that a tool left them untouched.
func (s *Server) SSHKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.accountKeys())
}

// accountKeys is the key list: the option's until a PUT replaced it.
func (s *Server) accountKeys() []string {
	if s.sshKeys == nil {
		s.sshKeys = slices.Clone(s.cfg.sshKeys)
	}
	if s.sshKeys == nil {
		s.sshKeys = []string{}
	}
	return s.sshKeys
}

type sshKeysBody struct {
	Keys []string `json:"keys"`
}

func (s *Server) getSSHKeys(r *http.Request, body []byte, now time.Time) response {
	return ok(http.StatusOK, sshKeysBody{Keys: slices.Clone(s.accountKeys())})
}

// putSSHKeys replaces the whole key set, as the real API does; the
// simulator serves it so a tool that wrote keys would be seen doing it.
func (s *Server) putSSHKeys(r *http.Request, body []byte, now time.Time) response {
	var req sshKeysBody
	if resp, decoded := s.decodeBody(r, body, "request body", &req); !decoded {
		return resp
	}
	s.sshKeys = append([]string{}, req.Keys...)
	return ok(http.StatusOK, sshKeysBody{Keys: slices.Clone(s.sshKeys)})
}
