package reqpolicy

import (
	"net/http"
	"testing"
)

// FuzzQuotaReaders feeds outside header values to both readers: they never
// panic, and every window they report has a non-negative limit and remainder
// and a reset no earlier than now.
func FuzzQuotaReaders(f *testing.F) {
	f.Add(`"minute";r=0;t=12, "hour";r=2990;t=3000`, `"minute";q=60;w=60, "hour";q=3000;w=3600`, "5000", "4999", "1700000000")
	f.Add(`"day";r=1;t=9223372036854775807`, `"day";q=50000;w=86400`, "1", "0", "9223372036854775807")
	f.Add(`minute;r=-1;t=x`, `;;,,"`, "-1", "", "0")
	f.Add("", "", "60, 60;w=60", "0", "12")
	f.Fuzz(func(t *testing.T, rate, policy, limit, remaining, reset string) {
		h := http.Header{"Ratelimit": {rate}, "Ratelimit-Policy": {policy},
			"X-Ratelimit-Limit": {limit}, "X-Ratelimit-Remaining": {remaining}, "X-Ratelimit-Reset": {reset},
			"Ratelimit-Limit": {limit}, "Ratelimit-Remaining": {remaining}, "Ratelimit-Reset": {reset}}
		for _, w := range append(IETFQuota(h, epoch), GitHubQuota(h, epoch)...) {
			if w.Limit < 0 || w.Remaining < 0 {
				t.Fatalf("window %+v: negative count", w)
			}
		}
		for _, w := range IETFQuota(h, epoch) {
			if w.Reset.Before(epoch) {
				t.Fatalf("window %+v resets before now", w)
			}
		}
	})
}
