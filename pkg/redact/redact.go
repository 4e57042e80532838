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
	for _, part := range append([]string{secret}, pemParts(secret)...) {
		for _, form := range encodedForms(part) {
			r.secrets[form] = struct{}{}
		}
	}
	r.replacer = nil
}

// minPEMLine is the shortest PEM body line redacted on its own: a full line
// is 64 characters, and only a last line shorter than this is left to the
// lines around it (a few characters of a key reveal nothing).
const minPEMLine = 16

// pemParts returns what else a PEM-encoded secret (an App's private key) may
// be published as: each base64 line of its body, and the body on one line.
// A file can hold the key reflowed, without its armor or cut, where the
// whole block would never match.
func pemParts(secret string) []string {
	if !strings.Contains(secret, "-----BEGIN ") {
		return nil
	}
	var parts []string
	var body strings.Builder
	for _, line := range strings.Split(strings.ReplaceAll(secret, "\r\n", "\n"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "-----") || strings.Contains(line, ":") {
			continue // armor and headers
		}
		body.WriteString(line)
		if len(line) >= minPEMLine {
			parts = append(parts, line)
		}
	}
	if body.Len() >= minPEMLine {
		parts = append(parts, body.String())
	}
	return parts
}

// Redact returns s with every known secret (in any registered encoding)
// replaced by Redacted, and every key Published finds by its shape. A nil
// Redactor removes the keys Published finds.
func (r *Redactor) Redact(s string) string {
	if r == nil || s == "" {
		return Published(s)
	}
	return Published(r.redactRegistered(s))
}

// redactRegistered replaces the registered secrets.
func (r *Redactor) redactRegistered(s string) string {
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
