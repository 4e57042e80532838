package runpod

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/org/runpod-gpu/pkg/redact"
)

// ErrorKind classifies a failed call by what the caller should do next.
type ErrorKind int

// Error kinds. Each has a sentinel below but KindWaitExceedsDeadline, which
// matches reqpolicy.ErrWaitExceedsDeadline through its cause.
const (
	KindUnexpected          ErrorKind = iota // a status the client does not classify
	KindCapacity                             // 400 on create: no capacity for this GPU/data center; try the next candidate
	KindBadRequest                           // 400 that breaks a request rule (not capacity)
	KindUnauthorized                         // 401: missing or invalid API key
	KindInsufficientBalance                  // 402: balance too low; no candidate will succeed
	KindForbidden                            // 403: the key may not use this resource (e.g. a GPU pool)
	KindNotFound                             // 404
	KindConflict                             // 409: e.g. an action invalid for the pod's status
	KindInvalidRequest                       // 422, or a request the client refused to send: a bug, never retry
	KindRateLimited                          // 429 after the policy's retries
	KindServer                               // 5xx or 408 after the policy's retries
	KindTransport                            // network failure or lost response; a create may have happened
	KindMalformedResponse                    // a success answer that does not decode
	KindWaitExceedsDeadline                  // the policy needed a pause longer than the caller's deadline
	KindPageBound                            // ListPods read its page bound and the server had more
	KindUnusableRecord                       // a success answer that does not describe the pod asked for (another id, no id, another name)
)

var kindNames = [...]string{
	KindUnexpected:          "unexpected status",
	KindCapacity:            "capacity",
	KindBadRequest:          "bad request",
	KindUnauthorized:        "unauthorized",
	KindInsufficientBalance: "insufficient balance",
	KindForbidden:           "forbidden",
	KindNotFound:            "not found",
	KindConflict:            "conflict",
	KindInvalidRequest:      "invalid request",
	KindRateLimited:         "rate limited",
	KindServer:              "server error",
	KindTransport:           "transport error",
	KindMalformedResponse:   "malformed response",
	KindWaitExceedsDeadline: "wait exceeds deadline",
	KindPageBound:           "page bound exceeded",
	KindUnusableRecord:      "unusable record",
}

// String names the kind, e.g. "capacity".
func (k ErrorKind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Sentinels matched with errors.Is against any error the client returns.
var (
	ErrUnexpected          = errors.New("runpod: unexpected status")
	ErrCapacity            = errors.New("runpod: no capacity")
	ErrBadRequest          = errors.New("runpod: bad request")
	ErrUnauthorized        = errors.New("runpod: unauthorized")
	ErrInsufficientBalance = errors.New("runpod: insufficient balance")
	ErrForbidden           = errors.New("runpod: forbidden")
	ErrNotFound            = errors.New("runpod: not found")
	ErrConflict            = errors.New("runpod: conflict")
	ErrInvalidRequest      = errors.New("runpod: invalid request")
	ErrRateLimited         = errors.New("runpod: rate limited")
	ErrServer              = errors.New("runpod: server error")
	ErrTransport           = errors.New("runpod: transport error")
	ErrMalformedResponse   = errors.New("runpod: malformed response")
	ErrPageBound           = errors.New("runpod: page bound exceeded")
	ErrUnusableRecord      = errors.New("runpod: unusable record")
	// ErrAnswerTooLarge is the cause (errors.Is through Unwrap) of a
	// malformed response whose body passed the call's size bound.
	ErrAnswerTooLarge = errors.New("runpod: answer too large")
)

var kindSentinels = map[ErrorKind]error{
	KindUnexpected:          ErrUnexpected,
	KindCapacity:            ErrCapacity,
	KindBadRequest:          ErrBadRequest,
	KindUnauthorized:        ErrUnauthorized,
	KindInsufficientBalance: ErrInsufficientBalance,
	KindForbidden:           ErrForbidden,
	KindNotFound:            ErrNotFound,
	KindConflict:            ErrConflict,
	KindInvalidRequest:      ErrInvalidRequest,
	KindRateLimited:         ErrRateLimited,
	KindServer:              ErrServer,
	KindTransport:           ErrTransport,
	KindMalformedResponse:   ErrMalformedResponse,
	KindPageBound:           ErrPageBound,
	KindUnusableRecord:      ErrUnusableRecord,
}

// APIError is every failure the client returns: an error answer decoded from
// problem+json (or whatever body came back), a transport failure, a malformed
// success, or a request refused before sending. Its text fields are redacted.
type APIError struct {
	Op         string    // what the client was doing, e.g. "create pod", "get pod abc"
	StatusCode int       // HTTP status; 0 when no response was read
	Title      string    // problem+json title (or the status text)
	Detail     string    // problem+json detail, or the body's text
	Errors     []string  // problem+json per-field validation messages
	Kind       ErrorKind // what the caller should do next
	Err        error     // the underlying cause, if any (transport error, *reqpolicy.WaitError)

	redactor *redact.Redactor
}

// Error reads "runpod: <op>: <status> <title>: <detail> [<errors>] (<kind>)".
func (e *APIError) Error() string {
	parts := []string{"runpod"}
	if e.Op != "" {
		parts = append(parts, e.Op)
	}
	if e.Title != "" {
		if e.StatusCode != 0 {
			parts = append(parts, fmt.Sprintf("%d %s", e.StatusCode, e.Title))
		} else {
			parts = append(parts, e.Title)
		}
	}
	if e.Detail != "" {
		parts = append(parts, e.Detail)
	}
	msg := strings.Join(parts, ": ")
	if len(e.Errors) > 0 {
		msg += " [" + strings.Join(e.Errors, "; ") + "]"
	}
	msg += " (" + e.Kind.String() + ")"
	// The fields were redacted one by one; joining them must not form a secret either.
	return e.redactor.Redact(msg)
}

// Unwrap returns the underlying cause.
func (e *APIError) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's Kind.
func (e *APIError) Is(target error) bool {
	sentinel, ok := kindSentinels[e.Kind]
	return ok && target == sentinel
}

// Limits on text copied from a response into an error.
const (
	maxDetailRunes = 512
	maxErrorItems  = 20
)

// problem is the tolerant shape of an error body: RFC 9457 problem+json as v2
// sends it, plus the v1 forms {"error": "...", "status": N} and {"message": "..."}.
type problem struct {
	Title   string          `json:"title"`
	Detail  string          `json:"detail"`
	Errors  json.RawMessage `json:"errors"`
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
}

// decodeError turns an error answer into an *APIError. create marks a pod
// create, where 400 means capacity unless the detail clearly names a rule.
func decodeError(op string, status int, body []byte, create bool, r *redact.Redactor) *APIError {
	e := &APIError{Op: op, StatusCode: status, redactor: r}
	var p problem
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") && json.Unmarshal(body, &p) == nil {
		e.Title = clip(r.Redact(p.Title))
		e.Detail = p.Detail
		if e.Detail == "" {
			e.Detail = cmp.Or(textOf(p.Error), p.Message)
		}
		for i, msg := range messagesOf(p.Errors) {
			if i == maxErrorItems {
				e.Errors = append(e.Errors, "…")
				break
			}
			e.Errors = append(e.Errors, clip(r.Redact(msg)))
		}
	} else if err := json.Unmarshal(body, &e.Detail); err != nil {
		// Not JSON (or not a JSON string): an HTML error page, plain text.
		e.Detail = trimmed
	}
	// Redact first: a clipped secret would leak its prefix, and one with odd
	// whitespace would no longer match after the whitespace is folded.
	e.Detail = clip(strings.Join(strings.Fields(r.Redact(e.Detail)), " "))
	if e.Title == "" {
		e.Title = cmp.Or(http.StatusText(status), "error")
	}
	e.Kind = kindOf(status, create, e.Detail)
	return e
}

// kindOf maps a status to a Kind. 400 on create is capacity by default:
// RunPod reports no-capacity only as a human detail with no machine code, and
// taking it for capacity moves the caller to its next candidate, which is
// what RunPod's own guidance says to do for any 400 on create. Only a detail
// that clearly states a request rule (and no capacity words) is a bad request.
func kindOf(status int, create bool, detail string) ErrorKind {
	switch {
	case status == http.StatusBadRequest && create:
		if mentionsRule(detail) && !mentionsCapacity(detail) {
			return KindBadRequest
		}
		return KindCapacity
	case status == http.StatusBadRequest:
		return KindBadRequest
	case status == http.StatusUnauthorized:
		return KindUnauthorized
	case status == http.StatusPaymentRequired:
		return KindInsufficientBalance
	case status == http.StatusForbidden:
		return KindForbidden
	case status == http.StatusNotFound:
		return KindNotFound
	case status == http.StatusConflict:
		return KindConflict
	case status == http.StatusUnprocessableEntity:
		return KindInvalidRequest
	case status == http.StatusTooManyRequests:
		return KindRateLimited
	case status == http.StatusRequestTimeout, status >= 500 && status <= 599:
		return KindServer
	}
	return KindUnexpected
}

var capacityWords = []string{
	"capacity", "no instances", "not available", "unavailable", "could not be placed",
	"out of stock", "does not have the resources", "no machine", "no gpu",
}

var ruleWords = []string{
	"mutually exclusive", "invalid", "must be", "must not", "is required", "are required",
	"not allowed", "not supported", "unsupported", "malformed",
}

func mentionsCapacity(detail string) bool { return containsAny(detail, capacityWords) }
func mentionsRule(detail string) bool     { return containsAny(detail, ruleWords) }

func containsAny(s string, words []string) bool {
	s = strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// messagesOf reads "errors" as RunPod sends it (strings) and tolerates objects
// or a single string.
func messagesOf(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		if s := textOf(raw); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, item := range items {
		if s := textOf(item); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// textOf renders a JSON value as text: strings as they are, objects by their
// "message" or "detail" member, anything else as compact JSON.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct{ Message, Detail string }
	if json.Unmarshal(raw, &obj) == nil && cmp.Or(obj.Message, obj.Detail) != "" {
		return cmp.Or(obj.Message, obj.Detail)
	}
	return string(raw)
}

// clip shortens outside text for an error message, on a rune boundary.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "?")
	if r := []rune(s); len(r) > maxDetailRunes {
		return string(r[:maxDetailRunes]) + "…"
	}
	return s
}

// invalidArgument is a request the client refuses to send.
func invalidArgument(op, format string, args ...any) *APIError {
	return &APIError{Op: op, Title: "invalid argument (not sent)", Detail: fmt.Sprintf(format, args...), Kind: KindInvalidRequest}
}
