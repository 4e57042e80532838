package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"
)

func TestRedactor(t *testing.T) {
	const key = "rpa_ABC/def+ghi=xyz"
	jit := base64.StdEncoding.EncodeToString([]byte(`{"token":"jit-secret"}`))
	jsonEscaped, _ := json.Marshal("<" + key + ">")
	tests := []struct {
		name    string
		secrets []string
		in      string
		wantOut string
	}{
		{name: "literal", secrets: []string{key}, in: "Bearer " + key, wantOut: "Bearer ***"},
		{name: "twice", secrets: []string{key}, in: key + " and " + key, wantOut: "*** and ***"},
		{name: "base64", secrets: []string{key}, in: "b64=" + base64.StdEncoding.EncodeToString([]byte(key)), wantOut: "b64=***"},
		{name: "base64 url", secrets: []string{key}, in: "b64=" + base64.RawURLEncoding.EncodeToString([]byte(key)), wantOut: "b64=***"},
		{name: "query escaped", secrets: []string{key}, in: "?api_key=" + url.QueryEscape(key), wantOut: "?api_key=***"},
		{name: "json escaped", secrets: []string{"<" + key + ">"}, in: `{"k":` + string(jsonEscaped) + `}`, wantOut: `{"k":"***"}`},
		{name: "slash escaped", secrets: []string{key}, in: `"rpa_ABC\/def+ghi=xyz"`, wantOut: `"***"`},
		{name: "jit config", secrets: []string{jit}, in: "config " + jit, wantOut: "config ***"},
		{name: "secret containing another", secrets: []string{"abc", "abcdef"}, in: "xabcdefx abc", wantOut: "x***x ***"},
		{name: "blank secrets ignored", secrets: []string{"", "  "}, in: "nothing to hide", wantOut: "nothing to hide"},
		{name: "no secrets", in: "plain", wantOut: "plain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, NewRedactor(tc.secrets...).Redact(tc.in), tc.wantOut)
		})
	}
}

func TestRedactorAddAfterUse(t *testing.T) {
	r := NewRedactor("first-secret")
	assert.Equal(t, r.Redact("first-secret second-secret"), "*** second-secret")
	r.Add("second-secret")
	assert.Equal(t, r.Redact("first-secret second-secret"), "*** ***")

	var nilRedactor *Redactor
	assert.Equal(t, nilRedactor.Redact("as is"), "as is")
	var zero Redactor
	zero.Add("zero-value-secret")
	assert.Equal(t, zero.Redact("zero-value-secret"), "***")
}

func TestRedactorConcurrentUse(t *testing.T) {
	r := NewRedactor()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r.Add("secret-" + string(rune('a'+i)))
		}()
		go func() {
			defer wg.Done()
			_ = r.Redact("secret-a secret-b")
		}()
	}
	wg.Wait()
	assert.Equal(t, r.Redact("secret-a secret-h"), "*** ***")
}

// A PEM key is removed however a text holds it: whole, line by line without
// its armor, or its body on one line.
func TestRedactorRemovesAPEMKeyInAnyShape(t *testing.T) {
	line1 := "MIIEowIBAAKCAQEAw1f6ItZ0vU9mBqQ2ZJ3y0rYb9h3y8bE2aT0kQmPp7T0eXQ1d"
	line2 := "Zr3dU9mWqC2h5xJfDk7oR0l8Vb1nE6sYpQwLz4tGh2jKcM9uA1bN3xVfR7yTqP0s"
	last := "AQAB"
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + line1 + "\n" + line2 + "\n" + last + "\n-----END RSA PRIVATE KEY-----\n"
	r := NewRedactor(pem)
	for name, text := range map[string]string{
		"whole":           "key:\n" + pem,
		"CRLF":            strings.ReplaceAll(pem, "\n", "\r\n"),
		"without armor":   line1 + "\n" + line2 + "\n",
		"one line":        line1 + line2 + last,
		"a line in prose": "the key starts " + line1 + " and goes on",
	} {
		got := r.Redact(text)
		for _, part := range []string{line1, line2} {
			assert.Check(t, !strings.Contains(got, part), "%s: %q", name, got)
		}
	}
	assert.Equal(t, r.Redact("AQAB is a common exponent"), "AQAB is a common exponent", "a short last line is left alone")
}
