// Package redact keeps secrets (API keys, tokens, JIT runner configs) out of
// errors, log lines and outputs. It is its own package so that anything that
// prints can use it without importing the HTTP request policy.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// Redacted replaces every secret the Redactor knows.
const Redacted = "***"

// Redactor removes registered secrets (API keys, tokens, JIT configs) from text
// before it reaches an error or a log line. Besides each secret's literal form
// it removes the base64, URL-escaped and JSON-escaped forms, because APIs echo
// values back in those encodings. It is safe for concurrent use.
type Redactor struct {
	mu       sync.RWMutex
	secrets  map[string]struct{}
	replacer *strings.Replacer // rebuilt lazily after Add
}

// NewRedactor returns a Redactor that knows secrets; empty ones are ignored.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{secrets: map[string]struct{}{}}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add registers one more secret. Blank values are ignored, since redacting
// the empty string would mangle every line.
func (r *Redactor) Add(secret string) {
	if strings.TrimSpace(secret) == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.secrets == nil {
		r.secrets = map[string]struct{}{}
	}
	for _, form := range encodedForms(secret) {
		r.secrets[form] = struct{}{}
	}
	r.replacer = nil
}

// Redact returns s with every known secret (in any registered encoding)
// replaced by Redacted. A nil Redactor returns s unchanged.
func (r *Redactor) Redact(s string) string {
	if r == nil || s == "" {
		return s
	}
	r.mu.RLock()
	rep := r.replacer
	r.mu.RUnlock()
	if rep == nil {
		rep = r.build()
	}
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

func (r *Redactor) build() *strings.Replacer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replacer != nil || len(r.secrets) == 0 {
		return r.replacer
	}
	forms := make([]string, 0, len(r.secrets))
	for s := range r.secrets {
		forms = append(forms, s)
	}
	// Longest first, so a secret that contains another is removed whole
	// rather than leaving its tail behind.
	sort.Slice(forms, func(i, j int) bool {
		if len(forms[i]) != len(forms[j]) {
			return len(forms[i]) > len(forms[j])
		}
		return forms[i] < forms[j]
	})
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Redacted)
	}
	r.replacer = strings.NewReplacer(pairs...)
	return r.replacer
}

// encodedForms lists the ways an API may echo secret back.
func encodedForms(secret string) []string {
	forms := []string{
		secret,
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.RawStdEncoding.EncodeToString([]byte(secret)),
		base64.URLEncoding.EncodeToString([]byte(secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret),
		url.PathEscape(secret),
	}
	if b, err := json.Marshal(secret); err == nil && len(b) >= 2 {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	// Go's encoder escapes <, > and &; other encoders only escape quotes,
	// backslashes and control characters, and some escape "/".
	forms = append(forms, strings.ReplaceAll(secret, "/", `\/`))
	return forms
}
