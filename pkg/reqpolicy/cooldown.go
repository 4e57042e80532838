package reqpolicy

import (
	"sync"
	"time"
)

// Cooldown is the process-local "not before" instant shared by every request
// of one Policy: a 429/503 Retry-After or a backoff sets it, and every request
// waits for it before it is sent. It only ever moves forward.
type Cooldown struct {
	mu        sync.Mutex
	notBefore time.Time
}

// NotBefore returns the instant before which no request should be sent; the
// zero time means no cooldown was ever set.
func (c *Cooldown) NotBefore() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notBefore
}

// Extend moves the cooldown to t unless it already ends later.
func (c *Cooldown) Extend(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.notBefore) {
		c.notBefore = t
	}
}

// Remaining returns how long from now the cooldown still lasts (0 when over).
func (c *Cooldown) Remaining(now time.Time) time.Duration {
	if d := c.NotBefore().Sub(now); d > 0 {
		return d
	}
	return 0
}
