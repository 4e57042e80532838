// Package contract validates RunPod REST v2 requests and responses against
// RunPod's published OpenAPI 3.1 description (embedded byte for byte as
// RunPod published it) plus the known deltas of the live API, which live in
// deltas.go and nowhere else.
//
// The simulated RunPod uses it to answer 422 exactly where the real API would,
// and tests use it to prove every body the client builds and every response the
// simulator returns is what the contract allows.
package contract

import (
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

//go:embed runpod-rest-v2.openapi.json
var runpodOpenAPI []byte

// RunPodOpenAPI returns the embedded OpenAPI document as published (without deltas).
func RunPodOpenAPI() []byte { return bytes.Clone(runpodOpenAPI) }

const docURL = "https://api.runpod.io/openapi.json"

// Error is a contract violation; Messages are shaped like RunPod's own 422
// problem+json "errors" entries ("$: additional properties 'bogus' not allowed").
type Error struct {
	// Subject says what was validated, e.g. "request POST /v2/pods".
	Subject string
	// Messages lists each violation, instance location first.
	Messages []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s violates the RunPod contract: %s", e.Subject, strings.Join(e.Messages, "; "))
}

// Validator checks bodies against the contract. It is safe for concurrent use.
type Validator struct {
	doc map[string]any
	ops []operation

	mu       sync.Mutex // guards compiler and cache: the compiler is not concurrency-safe
	compiler *jsonschema.Compiler
	cache    map[string]*jsonschema.Schema
}

type operation struct {
	method    string
	template  string
	pattern   *regexp.Regexp
	request   string            // JSON pointer of the request schema, "" when none
	responses map[string]string // status code or "default" → JSON pointer of the schema ("" = no body)
}

var (
	runpodOnce sync.Once
	runpodV    *Validator
	runpodErr  error
)

// RunPod returns the shared validator for RunPod REST v2 with the deltas applied.
// It panics only if the embedded document itself is broken, which a test guards.
func RunPod() *Validator {
	runpodOnce.Do(func() { runpodV, runpodErr = newValidator(runpodOpenAPI) })
	if runpodErr != nil {
		panic(runpodErr)
	}
	return runpodV
}

func newValidator(raw []byte) (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("contract: decode OpenAPI: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("contract: OpenAPI document is not an object")
	}
	if err := applyDeltas(m); err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat() // RFC 3339 times and the like are part of the contract
	if err := c.AddResource(docURL, m); err != nil {
		return nil, fmt.Errorf("contract: add OpenAPI resource: %w", err)
	}
	v := &Validator{doc: m, compiler: c, cache: map[string]*jsonschema.Schema{}}
	if err := v.indexOperations(); err != nil {
		return nil, err
	}
	return v, nil
}

var paramRE = regexp.MustCompile(`\{[^/]+\}`)

func (v *Validator) indexOperations() error {
	paths, _ := v.doc["paths"].(map[string]any)
	templates := make([]string, 0, len(paths))
	for p := range paths {
		templates = append(templates, p)
	}
	// Literal segments must win over parameters (/v2/registries/delegations vs /v2/registries/{id}).
	sort.Slice(templates, func(i, j int) bool {
		ci, cj := strings.Count(templates[i], "{"), strings.Count(templates[j], "{")
		if ci != cj {
			return ci < cj
		}
		return templates[i] < templates[j]
	})
	for _, tmpl := range templates {
		item, _ := paths[tmpl].(map[string]any)
		re := templatePattern(tmpl)
		for method, raw := range item {
			op, ok := raw.(map[string]any)
			if !ok || method == "parameters" {
				continue
			}
			o := operation{method: strings.ToUpper(method), template: tmpl, pattern: re, responses: map[string]string{}}
			base := "/paths/" + escape(tmpl) + "/" + method
			if rb, ok := op["requestBody"].(map[string]any); ok {
				o.request = v.mediaSchema(rb, base+"/requestBody")
			}
			resps, _ := op["responses"].(map[string]any)
			for code, r := range resps {
				rm, _ := r.(map[string]any)
				o.responses[code] = v.mediaSchema(rm, base+"/responses/"+escape(code))
			}
			v.ops = append(v.ops, o)
		}
	}
	return nil
}

// mediaSchema returns the JSON pointer of the JSON (or problem+json) schema of a
// request body or response, following one level of $ref into components.
// templatePattern turns "/v2/pods/{id}" into a regexp matching concrete paths.
func templatePattern(tmpl string) *regexp.Regexp {
	literals := paramRE.Split(tmpl, -1)
	for i, l := range literals {
		literals[i] = regexp.QuoteMeta(l)
	}
	return regexp.MustCompile("^" + strings.Join(literals, "[^/]+") + "$")
}

func (v *Validator) mediaSchema(obj map[string]any, ptr string) string {
	if ref, ok := obj["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
		ptr = strings.TrimPrefix(ref, "#")
		obj = v.lookup(ptr)
	}
	content, _ := obj["content"].(map[string]any)
	for _, mt := range []string{"application/json", "application/problem+json"} {
		media, _ := content[mt].(map[string]any)
		if _, ok := media["schema"]; ok {
			return ptr + "/content/" + escape(mt) + "/schema"
		}
	}
	return ""
}

func (v *Validator) lookup(ptr string) map[string]any {
	var cur any = v.doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[unescape(tok)]
	}
	m, _ := cur.(map[string]any)
	return m
}

func escape(s string) string   { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }
func unescape(s string) string { return strings.NewReplacer("~1", "/", "~0", "~").Replace(s) }

func (v *Validator) find(method, path string) (*operation, error) {
	method = strings.ToUpper(method)
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	for i := range v.ops {
		if v.ops[i].method == method && v.ops[i].pattern.MatchString(path) {
			return &v.ops[i], nil
		}
	}
	return nil, &Error{Subject: method + " " + path, Messages: []string{"$: no such operation in the contract"}}
}

// Operation returns the OpenAPI path template matching a concrete path, e.g.
// "/v2/pods/{id}" for "/v2/pods/abc", or an error when the contract has none.
func (v *Validator) Operation(method, path string) (string, error) {
	op, err := v.find(method, path)
	if err != nil {
		return "", err
	}
	return op.template, nil
}

// ValidateRequest checks a request body. A nil body is valid only for
// operations without a required JSON body.
func (v *Validator) ValidateRequest(method, path string, body []byte) error {
	op, err := v.find(method, path)
	if err != nil {
		return err
	}
	subject := "request " + op.method + " " + path
	if op.request == "" {
		if len(bytes.TrimSpace(body)) > 0 {
			return &Error{Subject: subject, Messages: []string{"$: this operation takes no request body"}}
		}
		return nil
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return &Error{Subject: subject, Messages: []string{"$: request body is required"}}
	}
	return v.validate(subject, op.request, body)
}

// ValidateResponse checks a response body for its status code (falling back to
// the operation's "default" response). Statuses the contract does not list are errors.
func (v *Validator) ValidateResponse(method, path string, status int, body []byte) error {
	op, err := v.find(method, path)
	if err != nil {
		return err
	}
	subject := fmt.Sprintf("response %d to %s %s", status, op.method, path)
	ptr, ok := op.responses[strconv.Itoa(status)]
	if !ok {
		ptr, ok = op.responses["default"]
	}
	if !ok {
		return &Error{Subject: subject, Messages: []string{fmt.Sprintf("$: status %d is not a documented response", status)}}
	}
	if ptr == "" {
		if len(bytes.TrimSpace(body)) > 0 {
			return &Error{Subject: subject, Messages: []string{"$: this response has no body in the contract"}}
		}
		return nil
	}
	return v.validate(subject, ptr, body)
}

// ValidateSchema checks a body against a named components/schemas entry.
func (v *Validator) ValidateSchema(name string, body []byte) error {
	if v.lookup("/components/schemas/"+escape(name)) == nil {
		return &Error{Subject: "schema " + name, Messages: []string{"$: no such schema in the contract"}}
	}
	return v.validate("schema "+name, "/components/schemas/"+escape(name), body)
}

func (v *Validator) validate(subject, ptr string, body []byte) error {
	sch, err := v.schema(ptr)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return &Error{Subject: subject, Messages: []string{"$: invalid JSON: " + err.Error()}}
	}
	if err := sch.Validate(inst); err != nil {
		return &Error{Subject: subject, Messages: messages(err)}
	}
	return nil
}

func (v *Validator) schema(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.cache[ptr]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("contract: compile %s: %w", ptr, err)
	}
	v.cache[ptr] = s
	return s, nil
}

var printer = message.NewPrinter(language.English)

// messages flattens a validation error into RunPod-style lines, one per leaf.
func messages(err error) []string {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []string{"$: " + err.Error()}
	}
	var out []string
	seen := map[string]bool{}
	add := func(line string) {
		if !seen[line] {
			seen[line] = true
			out = append(out, line)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if _, ok := e.ErrorKind.(*kind.FalseSchema); ok && len(e.InstanceLocation) > 0 {
				// unevaluatedProperties:false reports each unknown property as a false schema.
				parent := e.InstanceLocation[:len(e.InstanceLocation)-1]
				name := e.InstanceLocation[len(e.InstanceLocation)-1]
				add(location(parent) + ": additional properties '" + name + "' not allowed")
				return
			}
			add(location(e.InstanceLocation) + ": " + e.ErrorKind.LocalizedString(printer))
			return
		}
		// When a branch failed, 2020-12 drops its annotations, so its siblings report
		// every property as unevaluated: those echoes are noise next to the real cause.
		realCause := false
		for _, c := range e.Causes {
			if _, ok := c.ErrorKind.(*kind.FalseSchema); !ok {
				realCause = true
			}
		}
		for _, c := range e.Causes {
			if _, ok := c.ErrorKind.(*kind.FalseSchema); ok && realCause {
				continue
			}
			walk(c)
		}
	}
	walk(ve)
	return out
}

// location turns an instance location into RunPod's "$.a.b" notation.
func location(tokens []string) string {
	if len(tokens) == 0 {
		return "$"
	}
	return "$." + strings.Join(tokens, ".")
}
