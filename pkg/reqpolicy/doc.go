// Package reqpolicy is the one request policy every outside API call of the suite
// follows: bounded exponential backoff with jitter for 408, 429, 5xx and
// transport failures; Retry-After as a minimum wait, even above the backoff cap;
// one process-local cooldown shared by every request of a Policy; waits that must
// fit the caller's deadline; non-idempotent requests sent once, unless answered
// 429 (a rate limit refuses a request unprocessed, so repeating it cannot act
// twice); and every error and log line it writes passed through a shared
// redact.Redactor (package redact).
//
// It is an http.RoundTripper layer, so clients stack it as auth → retry → network:
//
//	policy := reqpolicy.New(reqpolicy.WithLogger(log))
//	client := &http.Client{Transport: authTransport{next: policy.Transport(http.DefaultTransport)}}
//
// The retry loop is github.com/hashicorp/go-retryablehttp's Client.Do. The package
// supplies its hooks (CheckRetry, Backoff, PrepareRetry, ErrorHandler) with what the
// library does not do: the classifier, the shared cooldown, per-request attempt
// limits, waits on an injectable clock that must fit the deadline, and redaction.
// Clocks and sleepers are injectable so tests never sleep.
package reqpolicy
