package ghapi

import "github.com/google/go-github/v66/github"

// REST returns the go-github client under c, with c's credentials, request
// policy (retries, deadlines, rate limits) and redaction, for the calls this
// package does not wrap (the repository set-up's writes, in pkg/ghsetup).
func (c *Client) REST() *github.Client { return c.gh }
