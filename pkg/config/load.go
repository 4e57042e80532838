package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/money"
)

// MaxFileSize bounds what Load reads; a real config is a few kilobytes.
const MaxFileSize = 1 << 20

// YAML core-schema tags as yaml.Node.ShortTag reports them.
const (
	strTag   = "!!str"
	intTag   = "!!int"
	floatTag = "!!float"
	nullTag  = "!!null"
)

// SyntaxError reports a file that is not one well-formed YAML document.
type SyntaxError struct {
	// Source names the file.
	Source string
	// Line is where the parser stopped, as its message says, or 0 when it
	// names no line: where an annotation points.
	Line int
	// Err is the parser's error.
	Err error
}

// parserLineRE finds the line yaml.v3 (and parseDocument) name in a message.
var parserLineRE = lazyre.Regexp{Pattern: `\bline (\d+):`}

// newSyntaxError wraps a parser error with the line its message names,
// without the file's text: the parser quotes what it choked on, and the file
// may not be a config at all (a path given by mistake, or on purpose).
func newSyntaxError(source string, err error) *SyntaxError {
	e := &SyntaxError{Source: source, Err: errors.New(quotedRE.ReplaceAllString(err.Error(), "…"))}
	if m := parserLineRE.FindStringSubmatch(err.Error()); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
	}
	return e
}

// quotedRE finds what a parser message quotes from the file.
var quotedRE = lazyre.Regexp{Pattern: "`[^`]*`|'[^']*'|\"[^\"]*\""}

// Error formats "source: not a valid YAML config: reason".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: not a valid YAML config: %v", e.Source, e.Err)
}

// Unwrap returns the parser's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Load reads and parses the config file at path (see Parse).
func Load(path string) (*Config, error) { return LoadAs(path, path) }

// LoadAs is Load naming the file source in every error (the path relative
// to the repository, where the file was given resolved to an absolute one).
func LoadAs(path, source string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: pe.Op, Path: source, Err: pe.Err}
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", source, err)
	}
	if len(data) > MaxFileSize {
		return nil, &SyntaxError{Source: source, Err: fmt.Errorf("larger than %d bytes", MaxFileSize)}
	}
	return Parse(data, source)
}

// Parse parses one YAML document over Default and validates it. source names
// the file in errors. It returns a *SyntaxError for unparsable YAML, and
// otherwise every problem joined, each a *FieldError carrying the source, the
// key and its line: unknown keys at any depth, nulls, wrongly typed values
// and broken invariants (see Validate).
func Parse(data []byte, source string) (*Config, error) {
	doc, err := parseDocument(data)
	if err != nil {
		return nil, newSyntaxError(source, err)
	}
	chk := checker{at: map[string]position{}}
	if doc != nil {
		chk.node(doc, configType, "")
	}
	if len(chk.problems) > 0 {
		return nil, chk.join(source)
	}
	cfg := Default()
	if doc != nil {
		// The check above has already reported anything this strict decode
		// would refuse, with better messages; KnownFields is the backstop.
		err := guardYAML(func() error {
			dec := yaml.NewDecoder(bytes.NewReader(data))
			dec.KnownFields(true)
			return dec.Decode(cfg)
		})
		if err != nil {
			return nil, newSyntaxError(source, err)
		}
	}
	if problems := cfg.problems(); len(problems) > 0 {
		chk.problems = problems
		return nil, chk.join(source)
	}
	return cfg, nil
}

// parseDocument returns the root node of the single document in data, or
// nil for an empty file.
func parseDocument(data []byte) (doc *yaml.Node, err error) {
	err = guardYAML(func() error {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		var file yaml.Node
		if err := dec.Decode(&file); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var extra yaml.Node
		if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
			if err != nil {
				return err
			}
			return fmt.Errorf("line %d: a second YAML document; the config is one document", extra.Line)
		}
		// A document holding only null ("~") is as empty as an empty file.
		if len(file.Content) > 0 && file.Content[0].ShortTag() != nullTag {
			doc = file.Content[0]
		}
		return nil
	})
	return doc, err
}

// guardYAML runs a yaml.v3 call, turning a panic into an error: the library
// converts its own failures but can still panic on some hostile inputs, and a
// bad config must never crash the action.
func guardYAML(call func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("YAML parser failed: %v", quotedRE.ReplaceAllString(fmt.Sprint(r), "…"))
		}
	}()
	return call()
}

var (
	configType      = reflect.TypeFor[Config]()
	cudaVersionType = reflect.TypeFor[CUDAVersion]()
	amountType      = reflect.TypeFor[money.Amount]()
)

// checker walks the YAML tree against the Config type before decoding, so
// every unknown key, null or wrongly typed value is reported with its full key
// path and line (yaml.v3 names only Go types), and plain floats never get
// truncated into integer fields.
type checker struct {
	problems []*FieldError
	// at maps each key path present in the file to where its key is.
	at map[string]position
}

// position is a node's place in the file, 1-based as yaml.v3 counts.
type position struct{ line, column int }

func at(n *yaml.Node) position { return position{n.Line, n.Column} }

func (c *checker) fail(n *yaml.Node, key, value, expected string) {
	c.failAt(n, &FieldError{Key: orRoot(key), Value: value, Expected: expected})
}

func (c *checker) failAt(n *yaml.Node, p *FieldError) {
	p.Line, p.Column = n.Line, n.Column
	c.problems = append(c.problems, p)
}

// join stamps source and positions on the collected problems and joins them.
func (c *checker) join(source string) error {
	for _, p := range c.problems {
		p.Source = source
		if p.Line > 0 {
			continue
		}
		if pos, ok := c.at[p.Key]; ok {
			p.Line, p.Column = pos.line, pos.column
			continue
		}
		// The key is absent: point at the closest enclosing key that is present.
		pos := c.enclosing(p.Key)
		p.Line, p.Column = pos.line, pos.column
		if p.Value != "" && hasDefault(p.Key) {
			p.Value += " (the default)"
			continue
		}
		// Absent without a default means missing, whatever zero value Go holds.
		p.Value = ""
	}
	for _, p := range c.problems {
		if !strings.HasSuffix(p.Value, " (the default)") && !kindOfValue[p.Value] {
			// A value of the file is never repeated: its line and column say
			// where it is, and the file may not be a config at all.
			p.Value = ""
		}
	}
	errs := make([]error, len(c.problems))
	for i, p := range c.problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// enclosing returns where key's closest present ancestor is, or the zero
// position.
func (c *checker) enclosing(key string) position {
	for {
		cut := strings.LastIndexAny(key, ".[")
		if cut <= 0 {
			return position{}
		}
		key = key[:cut]
		if pos, ok := c.at[key]; ok {
			return pos
		}
	}
}

func (c *checker) node(n *yaml.Node, t reflect.Type, key string) {
	if n.Kind == yaml.AliasNode {
		c.fail(n, key, "*"+n.Value, "a value written out (YAML aliases are not supported)")
		return
	}
	if n.ShortTag() == nullTag {
		c.fail(n, key, "null", expectedType(t)+"; omit the key to use the default")
		return
	}
	switch {
	case t.Kind() == reflect.Pointer:
		c.node(n, t.Elem(), key)
	case t == cudaVersionType:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != strTag {
			c.fail(n, key, shown(n), expectedType(t))
		} else if _, err := ParseCUDAVersion(n.Value); err != nil {
			c.fail(n, key, shown(n), cudaForm)
		}
	case t == amountType:
		// A YAML number of dollars, decoded by money.Amount; NaN, infinities
		// and numbers beyond what it holds are no amount.
		var v float64
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != intTag && n.ShortTag() != floatTag) || n.Decode(&v) != nil ||
			math.IsNaN(v) || math.Abs(v) > 1e9 {
			c.fail(n, key, shown(n), expectedType(t))
		}
	case t.Kind() == reflect.Struct:
		c.mapping(n, t, key)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.fail(n, key, shown(n), expectedType(t))
			return
		}
		for i, item := range n.Content {
			itemKey := fmt.Sprintf("%s[%d]", key, i)
			c.at[itemKey] = at(item)
			c.node(item, t.Elem(), itemKey)
		}
	default:
		c.scalar(n, t, key)
	}
}

func (c *checker) mapping(n *yaml.Node, t reflect.Type, key string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, key, shown(n), expectedType(t))
		return
	}
	fields := yamlFields(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keyNode, valueNode := n.Content[i], n.Content[i+1]
		name := keyNode.Value
		childKey := joinKey(key, name)
		field, known := fields[name]
		switch {
		case keyNode.Kind != yaml.ScalarNode || keyNode.ShortTag() != strTag || !known:
			names := fieldNames(t)
			p := &FieldError{Key: joinKey(key, UnknownKey), Expected: "a known key of " + orRoot(key) + ": one of " + strings.Join(names, ", ")}
			if keyNode.Kind == yaml.ScalarNode {
				p.Suggestion = nearestKey(name, names)
			}
			if p.Suggestion != "" && !strings.ContainsFunc(name, unicode.IsControl) {
				// A misspelling of one of the config's own keys (at most three
				// edits away, or a prefix of it) is shown; any other key's
				// text is not repeated.
				p.Key = childKey
			}
			c.failAt(keyNode, p)
			continue
		case seen[name]:
			c.fail(keyNode, childKey, "", "the key given once")
			continue
		}
		seen[name] = true
		c.at[childKey] = at(keyNode)
		c.node(valueNode, field.Type, childKey)
	}
}

func (c *checker) scalar(n *yaml.Node, t reflect.Type, key string) {
	tag := n.ShortTag()
	ok := n.Kind == yaml.ScalarNode
	switch t.Kind() {
	case reflect.String:
		if ok && tag != strTag {
			// yaml.v3 would keep the text, but editors and the JSON Schema see a
			// number or boolean here, so the file must say what it means.
			c.fail(n, key, shown(n), fmt.Sprintf("a string; quote it, unquoted YAML reads it as %s", strings.TrimPrefix(tag, "!!")))
			return
		}
	case reflect.Int:
		var v int
		ok = ok && tag == intTag && n.Decode(&v) == nil
	case reflect.Float64:
		var v float64
		ok = ok && (tag == intTag || tag == floatTag) && n.Decode(&v) == nil
	default:
		// Config has no other kinds; a new one must be added here (tests fail otherwise).
		ok = false
	}
	if !ok {
		c.fail(n, key, shown(n), expectedType(t))
	}
}

// expectedType describes what a value of Go type t looks like in YAML.
func expectedType(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.Pointer:
		return expectedType(t.Elem())
	case t == amountType:
		return "a number of US dollars, at most 1e9"
	case t == cudaVersionType:
		return `a quoted CUDA version such as "12.6" (unquoted, 12.10 would read as 12.1)`
	case t.Kind() == reflect.Struct:
		return "a mapping with keys " + strings.Join(fieldNames(t), ", ")
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return "a list of mappings with keys " + strings.Join(fieldNames(t.Elem()), ", ")
	case t.Kind() == reflect.Slice:
		return "a list of strings"
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Int:
		return "an integer"
	case t.Kind() == reflect.Float64:
		return "a number"
	}
	return t.String()
}

// shown renders a node for a message: scalars as written, collections by kind.
func shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if value := truncate(n.Value); n.ShortTag() != strTag && !strings.ContainsFunc(value, unicode.IsControl) {
		return value
	}
	return quote(n.Value)
}

// kindOfValue are the values a problem may still show: what kind of YAML
// value stands where another was wanted, never its text.
var kindOfValue = map[string]bool{"a list": true, "a mapping": true, "null": true}

// UnknownKey stands in a key path for a key the config does not have and
// that is no misspelling of one of its keys: that key's text is never
// repeated.
const UnknownKey = "(unknown key)"

func joinKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func orRoot(key string) string {
	if key == "" {
		return "the config"
	}
	return key
}

// yamlFields maps the yaml names of t's fields to the fields.
func yamlFields(t reflect.Type) map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if name := yamlName(f); name != "" {
			fields[name] = f
		}
	}
	return fields
}

// fieldNames lists t's yaml keys in declaration order.
func fieldNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			names = append(names, name)
		}
	}
	return names
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if !f.IsExported() || name == "-" {
		return ""
	}
	return name
}
