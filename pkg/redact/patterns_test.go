package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

const (
	runpodKey = "rpa_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcd"
	ghsToken  = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
	ghpToken  = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	ghoToken  = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
	patToken  = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
)

func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[s[i]>>4])+string("0123456789abcdef"[s[i]&15])))
	}
	return b.String()
}

func TestPublished(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "a RunPod key", in: "key " + runpodKey + " in a report", want: "key *** in a report"},
		{name: "its base64", in: "| " + base64.StdEncoding.EncodeToString([]byte(runpodKey)) + " |", want: "| *** |"},
		{name: "its unpadded URL-safe base64", in: base64.RawURLEncoding.EncodeToString([]byte(runpodKey)), want: "***"},
		{name: "base64 of a line holding it", in: "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+runpodKey)), want: "Authorization: Basic ***"},
		{name: "its URL-encoded form", in: "?api_key=" + url.QueryEscape(runpodKey), want: "?api_key=***"},
		{name: "fully percent-encoded", in: "k=" + percentAll(runpodKey) + "&x=1", want: "k=***&x=1"},
		{name: "an App installation token", in: `{"token":"` + ghsToken + `"}`, want: `{"token":"***"}`},
		{name: "a personal token", in: ghpToken, want: "***"},
		{name: "an OAuth token", in: ghoToken, want: "***"},
		{name: "a fine-grained token", in: "t=" + patToken, want: "t=***"},
		{name: "a checkout's Basic header", in: base64.StdEncoding.EncodeToString([]byte("x-access-token:" + ghsToken)), want: "***"},
		{name: "a SHA stays", in: "tested 0123456789abcdef0123456789abcdef01234567", want: "tested 0123456789abcdef0123456789abcdef01234567"},
		{name: "a short rpa_ word stays", in: "rpa_key is the name", want: "rpa_key is the name"},
		{name: "a pod id stays", in: "pod `zimrjna2hepqxx` at $0.36/h, 50%25 off", want: "pod `zimrjna2hepqxx` at $0.36/h, 50%25 off"},
		{name: "base64 of other text stays", in: base64.StdEncoding.EncodeToString([]byte("an ordinary sentence of forty bytes..")), want: base64.StdEncoding.EncodeToString([]byte("an ordinary sentence of forty bytes.."))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, Published(tc.in), tc.want)
		})
	}
}

// A Redactor removes keys it never registered too.
func TestRedactorRemovesUnregisteredKeys(t *testing.T) {
	r := NewRedactor("registered-secret-value")
	got := r.Redact("registered-secret-value " + runpodKey + " " + ghsToken)
	assert.Equal(t, got, "*** *** ***")
	var none *Redactor
	assert.Equal(t, none.Redact(runpodKey), "***")
}

func FuzzPublished(f *testing.F) {
	for _, s := range []string{runpodKey, base64.StdEncoding.EncodeToString([]byte(runpodKey)), url.QueryEscape(ghsToken), "plain", "%zz%4", "===="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Published(s)
		if keyRE.MatchString(out) {
			t.Fatalf("a key survived: %q -> %q", s, out)
		}
		if Published(out) != out {
			t.Fatalf("not stable: %q -> %q -> %q", s, out, Published(out))
		}
	})
}
