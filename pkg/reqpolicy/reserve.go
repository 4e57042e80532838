package reqpolicy

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Window is one rate-limit window a response reports: the requests it allows,
// how many are left, and when it resets.
type Window struct {
	Name      string
	Limit     int // 0 when the response does not say
	Remaining int
	Reset     time.Time
}

// QuotaReader reads the rate-limit windows a response's headers report (none
// when they report none or cannot be read).
type QuotaReader func(h http.Header, now time.Time) []Window

// WithReserve makes the policy leave a reserve of every window read reports
// for the other clients sharing the credential (the lanes sharing a RunPod key
// or a GitHub App): once a response shows fewer than ceil(fraction·limit)
// requests left in a window, no request of this policy goes out before that
// window resets. The hold is the shared cooldown, so it follows the usual
// rule: a wait that does not fit the caller's deadline ends the request with a
// *WaitError instead of sleeping past it. A fraction outside (0, 1) disables it.
func WithReserve(read QuotaReader, fraction float64) Option {
	return func(p *Policy) {
		if read != nil && fraction > 0 && fraction < 1 {
			p.reserve = &reserve{read: read, fraction: fraction}
		}
	}
}

// reserve is the state of WithReserve.
type reserve struct {
	read     QuotaReader
	fraction float64

	mu    sync.Mutex
	until time.Time
	why   string
}

// Held returns the instant before which the policy holds its requests to keep
// the reserve, and why; the zero time when no reserve was reached (or the
// policy keeps none).
func (p *Policy) Held() (time.Time, string) {
	if p.reserve == nil {
		return time.Time{}, ""
	}
	p.reserve.mu.Lock()
	defer p.reserve.mu.Unlock()
	return p.reserve.until, p.reserve.why
}

// ReserveOf is the number of requests a window's reserve keeps for others.
func ReserveOf(limit int, fraction float64) int {
	if limit <= 0 || !(fraction > 0) {
		return 0
	}
	return int(math.Ceil(fraction * float64(limit)))
}

// observeReserve reads resp's windows and, for each below its reserve, holds
// the policy's requests until the window resets.
func (p *Policy) observeReserve(resp *http.Response) {
	if p.reserve == nil || resp == nil {
		return
	}
	now := p.clock.Now()
	for _, w := range p.reserve.read(resp.Header, now) {
		keep := ReserveOf(w.Limit, p.reserve.fraction)
		if w.Remaining >= keep || !w.Reset.After(now) {
			continue
		}
		p.cooldown.Extend(w.Reset)
		r := p.reserve
		r.mu.Lock()
		extended := w.Reset.After(r.until)
		if extended {
			r.until = w.Reset
			r.why = fmt.Sprintf("the %s rate-limit window has %d of %d requests left, below the reserve of %d kept for the lanes sharing the credential; it resets at %s",
				w.Name, w.Remaining, w.Limit, keep, w.Reset.UTC().Format(time.RFC3339))
		}
		why := r.why
		r.mu.Unlock()
		if extended {
			p.log("rate-limit reserve: %s; holding requests for %s", why, w.Reset.Sub(now).Round(time.Second))
		}
	}
}

// GitHubQuota reads GitHub's X-RateLimit-Limit, -Remaining and -Reset (epoch
// seconds), named by X-RateLimit-Resource.
func GitHubQuota(h http.Header, _ time.Time) []Window {
	limit, err1 := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	remaining, err2 := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	reset, err3 := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || limit <= 0 || remaining < 0 || reset <= 0 {
		return nil
	}
	name := h.Get("X-RateLimit-Resource")
	if name == "" {
		name = "core"
	}
	return []Window{{Name: "GitHub " + name, Limit: limit, Remaining: remaining, Reset: time.Unix(reset, 0).UTC()}}
}

// IETFQuota reads the IETF draft RateLimit and RateLimit-Policy headers that
// RunPod's REST v2 sends on every authenticated response, e.g.
//
//	RateLimit: "minute";r=0;t=12, "hour";r=2990;t=3000
//	RateLimit-Policy: "minute";q=60;w=60, "hour";q=3000;w=3600
//
// r is what is left, t the seconds to the reset and q the window's quota. A
// window with no policy has an unknown limit and keeps no reserve; an item
// that cannot be read is left out. Without a readable RateLimit item it reads
// the earlier draft's separate headers instead (splitQuota).
func IETFQuota(h http.Header, now time.Time) []Window {
	limits := map[string]int{}
	for _, item := range sfList(h.Values("RateLimit-Policy")) {
		if q, ok := item.param("q"); ok {
			limits[item.name] = q
		}
	}
	var out []Window
	for _, item := range sfList(h.Values("RateLimit")) {
		r, okR := item.param("r")
		t, okT := item.param("t")
		if !okR || !okT || t > maxWindowSeconds {
			continue // a reset further off than any window is not a window (and would overflow)
		}
		out = append(out, Window{Name: "RunPod " + item.name, Limit: limits[item.name], Remaining: r, Reset: now.Add(time.Duration(t) * time.Second)})
	}
	if len(out) == 0 {
		return splitQuota(h, now)
	}
	return out
}

// splitQuota reads the earlier IETF draft's RateLimit-Limit, -Remaining and
// -Reset (delta seconds), e.g.
//
//	RateLimit-Limit: 60, 60;w=60
//	RateLimit-Remaining: 0
//	RateLimit-Reset: 12
//
// the first member of each naming the window closest to its end. Headers
// that cannot be read report no window.
func splitQuota(h http.Header, now time.Time) []Window {
	first := func(name string) (int, bool) {
		v, _, _ := strings.Cut(h.Get(name), ",")
		v, _, _ = strings.Cut(v, ";")
		n, err := strconv.Atoi(strings.TrimSpace(v))
		return n, err == nil && n >= 0
	}
	remaining, okR := first("RateLimit-Remaining")
	reset, okT := first("RateLimit-Reset")
	if !okR || !okT || reset > maxWindowSeconds {
		return nil
	}
	limit, okL := first("RateLimit-Limit")
	if !okL {
		limit = 0 // unknown (or negative): 0, which keeps no reserve
	}
	return []Window{{Name: "RunPod window", Limit: limit, Remaining: remaining, Reset: now.Add(time.Duration(reset) * time.Second)}}
}

// maxWindowSeconds bounds a RateLimit reset: RunPod's longest window is a day.
const maxWindowSeconds = 366 * 24 * 3600

// sfItem is one member of a structured-field list: a name (a string or a
// token) with integer parameters.
type sfItem struct {
	name   string
	params map[string]int
}

func (i sfItem) param(key string) (int, bool) {
	v, ok := i.params[key]
	return v, ok
}

// sfList reads the subset of RFC 8941 lists the RateLimit headers use. It is
// lenient: a member it cannot read is skipped, never an error.
func sfList(values []string) []sfItem {
	var out []sfItem
	for _, v := range values {
		for _, member := range strings.Split(v, ",") {
			parts := strings.Split(strings.TrimSpace(member), ";")
			name := strings.Trim(strings.TrimSpace(parts[0]), `"`)
			if name == "" {
				continue
			}
			item := sfItem{name: name, params: map[string]int{}}
			for _, p := range parts[1:] {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				n, err := strconv.Atoi(strings.TrimSpace(val))
				if ok && err == nil && n >= 0 {
					item.params[strings.TrimSpace(k)] = n
				}
			}
			out = append(out, item)
		}
	}
	return out
}
