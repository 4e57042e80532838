package reqpolicy

import "context"

type attemptLimitKey struct{}

// WithAttemptLimit caps the wire attempts of requests made with ctx at n (at
// least 1), below the policy's own maximum. Callers that count requests
// themselves, like the bounded pod deletion ("at most 5 DELETEs"), set 1.
func WithAttemptLimit(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptLimitKey{}, max(n, 1))
}

// attemptsFor returns the attempt budget of a request context.
func (p *Policy) attemptsFor(ctx context.Context) int {
	if n, ok := ctx.Value(attemptLimitKey{}).(int); ok && n < p.maxAttempts {
		return n
	}
	return p.maxAttempts
}
