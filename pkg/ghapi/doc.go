// Package ghapi is the suite's GitHub REST client: a thin layer over
// go-github v66 that adds GitHub App or token authentication, the shared
// request policy, bounded pagination, typed errors and secret redaction.
//
// # Layering
//
// Requests pass, top to bottom, through
//
//	go-github          builds requests, decodes JSON, keeps rate-limit memory
//	auth               ghinstallation.Transport (App) or a bearer-token transport
//	host guard         drops Authorization from any request that leaves the API host
//	token capture      registers minted installation tokens with the redactor
//	reqpolicy          retries, backoff, Retry-After, deadline-fitting waits
//	HTTP transport     Options.HTTPClient's transport, or http.DefaultTransport
//
// as in actions-runner-controller. Archive downloads (run logs, artifacts)
// follow GitHub's redirect to signed storage URLs through the request policy
// only, so no credential ever reaches the storage host.
//
// # Rate limits
//
// The request policy sits under go-github, so it sees every real response
// first: a 429, or a 403 that GitHub marks as a primary or secondary rate
// limit ([RateLimitClassifier]), is retried after at least the wait GitHub asks
// for, when that wait fits the caller's deadline. Only when the policy gives up
// does go-github see the response; it then returns *github.RateLimitError or
// *github.AbuseRateLimitError (or a plain *github.ErrorResponse for 429), which
// this package reports as a *RateLimitError (errors.Is(err, ErrRateLimited)).
// From then on go-github's client memory fails every call of that kind at once,
// without a request, until the reset time: the Client reports those
// short-circuits as the same *RateLimitError, so callers should wait for
// [RateLimitError.WaitFrom] rather than retry in a loop. A wait the policy
// cannot fit into the caller's deadline ends the call at once with an error
// matching reqpolicy.ErrWaitExceedsDeadline.
//
// POSTs that create something (JIT configs, check runs, comments, dispatches)
// are sent once, and again only after a 429 (refused unprocessed, so nothing
// was created); idempotent POSTs (run cancel, installation token minting) are
// marked with reqpolicy.AllowRetry.
//
// # Returned types
//
// GitHub resources come back as go-github types (*github.Runner,
// *github.CheckRun, *github.WorkflowRun, …), whose nil-safe GetX accessors
// callers already know. Inputs are this package's small structs, validated
// before any request. The one exception is [JITConfig], a package type
// because it carries a secret.
//
// # Secrets
//
// The token, every minted installation token and every JIT config are added
// to the Client's redactor; the message of every error a Client method returns
// is redacted with it.
package ghapi
