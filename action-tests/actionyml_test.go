package actiontests

// Every actions/<name>/action.yml is checked against its action's Go code: the
// metadata GitHub and the image need, and — statically, from the Go syntax of
// the action's main package, the package of the run function it hands to
// actionkit.Main (pkg/actions/<role>), and the module packages those hand their
// actionio.IO to — that the inputs it declares are exactly the inputs the code
// reads and the outputs exactly those it writes.
//
// What the analysis follows: calls of the IO's input methods (Input, InputOr,
// RequiredInput, SecretInput, Bool, Int, Duration, Lines: every exported
// method of actionio.IO whose first parameter is `name`) whose first argument
// is a string constant (a literal, a constant of the package or of a module
// package, a concatenation of those, or element i of the row a
// `for _, row := range [][N]string{…}` loop is on); outputs, which are typed:
// actionio.WriteOutputs[T](io, v) writes the fields of struct T tagged
// `output:"name"`, read here from T's declaration; package-level functions the
// IO is passed to (so actionkit.RunPod(io) counts as reading runpod-api-key and
// runpod-api-url); and the methods of a type whose field is set to the IO in a
// composite literal (provision's observer publishing pod-id).
//
// Inputs read with a computed name must be declared in the action's main or run package:
//
//	//runpod-gpu:inputs a,b      the inputs read with a computed name
//
// An IO handed to anything else (a method call, a variable, a return value)
// is a problem: that code may read and write anything.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/fs"
)

const (
	metaModule       = "github.com/org/runpod-gpu"
	metaActionIOPath = metaModule + "/pkg/actionio"
	metaInputsTag    = "//runpod-gpu:inputs"
	metaOutputTag    = "output" // actionio.OutputTag: the struct tag naming an output
)

// metaRepoRoot is the repository root, seen from this package's directory.
const metaRepoRoot = ".."

// metaImageRE is the published image: the placeholder tag in the tree, the
// digest once the release has pinned it.
var metaImageRE = regexp.MustCompile(`^docker://ghcr\.io/org/runpod-gpu(:v1|@sha256:[0-9a-f]{64})$`)

// metaBrandingColors are the colours GitHub's metadata syntax accepts.
var metaBrandingColors = []string{"white", "black", "yellow", "blue", "green", "orange", "red", "purple", "gray-dark"}

// metaActionYML is the action metadata this suite writes. It is decoded
// strictly, so a misspelt key is a problem rather than a silently ignored line.
type metaActionYML struct {
	Name        string                `yaml:"name"`
	Description string                `yaml:"description"`
	Author      string                `yaml:"author"`
	Branding    metaBranding          `yaml:"branding"`
	Inputs      map[string]metaInput  `yaml:"inputs"`
	Outputs     map[string]metaOutput `yaml:"outputs"`
	Runs        metaRuns              `yaml:"runs"`
}

type metaBranding struct {
	Icon  string `yaml:"icon"`
	Color string `yaml:"color"`
}

type metaInput struct {
	Description        string  `yaml:"description"`
	Required           bool    `yaml:"required"`
	Default            *string `yaml:"default"`
	DeprecationMessage string  `yaml:"deprecationMessage"`
}

type metaOutput struct {
	Description string `yaml:"description"`
}

type metaRuns struct {
	Using          string            `yaml:"using"`
	Image          string            `yaml:"image"`
	Entrypoint     string            `yaml:"entrypoint"`
	Args           []string          `yaml:"args"`
	Env            map[string]string `yaml:"env"`
	PreEntrypoint  string            `yaml:"pre-entrypoint"`
	PostEntrypoint string            `yaml:"post-entrypoint"`
}

// metaLoadActionYML decodes an action.yml strictly.
func metaLoadActionYML(data []byte) (metaActionYML, error) {
	var a metaActionYML
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		return metaActionYML{}, err
	}
	return a, nil
}

// metaActionDirs lists the actions that have an action.yml; an action still
// being written (no action.yml yet) is not checked.
func metaActionDirs(t *testing.T) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(metaRepoRoot, "actions", "*", "action.yml"))
	assert.NilError(t, err)
	var names []string
	for _, m := range matches {
		names = append(names, filepath.Base(filepath.Dir(m)))
	}
	assert.Assert(t, len(names) > 0, "no actions/*/action.yml found")
	return names
}

// metaMaxDescription is the longest description GitHub Marketplace shows in full.
const metaMaxDescription = 125

// metaCheckMetadata lists what an action.yml lacks for GitHub and for this suite.
func metaCheckMetadata(dir string, a metaActionYML) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(a.Name) == "" {
		add("name is missing")
	}
	if strings.TrimSpace(a.Description) == "" {
		add("description is missing")
	}
	if n := len([]rune(a.Description)); n > metaMaxDescription {
		add("description is %d characters: the Marketplace shows at most %d; move the long text to the README", n, metaMaxDescription)
	}
	if strings.TrimSpace(a.Author) == "" {
		add("author is missing")
	}
	if a.Branding.Icon == "" {
		add("branding.icon is missing")
	}
	if !slices.Contains(metaBrandingColors, a.Branding.Color) {
		add("branding.color %q: want one of %s", a.Branding.Color, strings.Join(metaBrandingColors, ", "))
	}
	for _, name := range metaSortedKeys(a.Inputs) {
		in := a.Inputs[name]
		if strings.TrimSpace(in.Description) == "" {
			add("input %q has no description", name)
		}
		if !in.Required && in.Default == nil {
			add("input %q is optional but declares no default", name)
		}
	}
	for _, name := range metaSortedKeys(a.Outputs) {
		if strings.TrimSpace(a.Outputs[name].Description) == "" {
			add("output %q has no description", name)
		}
	}
	if a.Runs.Using != "docker" {
		add("runs.using %q: want docker (every action is a binary in the one image)", a.Runs.Using)
	}
	if !metaImageRE.MatchString(a.Runs.Image) {
		add("runs.image %q: want docker://ghcr.io/org/runpod-gpu:v1 (the release pins @sha256:…)", a.Runs.Image)
	}
	if want := "/" + metaActionsBinary; a.Runs.Entrypoint != want {
		add("runs.entrypoint %q: want %q, the image's one program for every action", a.Runs.Entrypoint, want)
	}
	if want := []string{dir}; !slices.Equal(a.Runs.Args, want) {
		add("runs.args %q: want %q, the role that runs actions/%s's code", a.Runs.Args, want, dir)
	}
	return problems
}

// metaCompare lists the differences between what action.yml declares and what
// the code reads and writes.
func metaCompare(a metaActionYML, use *metaCodeUse) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	compare := func(kind, verbs, past string, declared map[string]bool, used map[string]string, listed map[string]bool, dynamic []string) {
		for _, name := range metaSortedKeys(declared) {
			if _, ok := used[name]; !ok && !listed[name] {
				add("%s %q is declared in action.yml but the code never %s it", kind, name, verbs)
			}
		}
		for _, name := range metaSortedKeys(used) {
			if !declared[name] {
				add("%s %q is %s at %s but action.yml does not declare it", kind, name, past, used[name])
			}
		}
		for _, name := range metaSortedKeys(listed) {
			if !declared[name] {
				add("%s %q is listed in %s but action.yml does not declare it", kind, name, metaInputsTag)
			}
		}
		if listed == nil {
			for _, pos := range dynamic {
				add("%s: the %s name is not a constant; list the names in a %s comment in the action's main or run package", pos, kind, metaInputsTag)
			}
		}
	}
	inputs, outputs := map[string]bool{}, map[string]bool{}
	for name := range a.Inputs {
		inputs[name] = true
	}
	for name := range a.Outputs {
		outputs[name] = true
	}
	compare("input", "reads", "read", inputs, use.inputs, use.listedInputs, use.dynamicInputs)
	compare("output", "writes", "written", outputs, use.outputs, nil, nil)
	for _, e := range use.escapes {
		add("%s; pass it to a package-level function", e)
	}
	return problems
}

func metaSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// metaCodeUse is what an action's code does with its actionio.IO.
type metaCodeUse struct {
	inputs, outputs map[string]string // name → where it is first used
	dynamicInputs   []string          // input reads whose name is not a constant
	escapes         []string          // the IO handed to code the analysis cannot follow
	listedInputs    map[string]bool   // from the //runpod-gpu:inputs directive; nil when absent
}

// metaPkg is one parsed package of the module.
type metaPkg struct {
	files   []*ast.File
	consts  map[string]metaDecl[ast.Expr]
	funcs   map[string]metaDecl[*ast.FuncDecl]
	methods map[string][]metaDecl[*ast.FuncDecl] // by receiver type name
	structs map[string]*ast.StructType           // struct types, by name: typed outputs
}

// metaDecl is a declaration with the file it is in (for that file's imports).
type metaDecl[T any] struct {
	node T
	file *ast.File
}

// metaAnalyzer follows an action's IO through the module's packages.
type metaAnalyzer struct {
	root    string // repository root
	fset    *token.FileSet
	pkgs    map[string]*metaPkg
	scanned map[string]bool
	use     *metaCodeUse
	// ioMethods maps the IO's named-input methods to "input".
	ioMethods map[string]string
	err       error
}

// metaAnalyzeAction reads the Go code of the action in dir, resolving module
// packages under root.
func metaAnalyzeAction(root, dir string) (*metaCodeUse, error) {
	a := &metaAnalyzer{
		root: root, fset: token.NewFileSet(), pkgs: map[string]*metaPkg{}, scanned: map[string]bool{},
		use: &metaCodeUse{inputs: map[string]string{}, outputs: map[string]string{}},
	}
	main := a.load(dir)
	if a.err != nil {
		return nil, a.err
	}
	if len(main.files) == 0 {
		return nil, fmt.Errorf("%s: no Go files", dir)
	}
	for _, p := range append([]*metaPkg{main}, a.runPackages(main)...) {
		for _, f := range p.files {
			for _, group := range f.Comments {
				for _, c := range group.List {
					a.directive(c.Text)
				}
			}
		}
		for _, name := range metaSortedKeys(p.funcs) {
			a.scanFunc(p, p.funcs[name], "", nil)
		}
		for _, typ := range metaSortedKeys(p.methods) {
			for _, m := range p.methods[typ] {
				a.scanFunc(p, m, typ, nil)
			}
		}
	}
	return a.use, a.err
}

// runPackages lists the module packages whose function the main package
// hands to actionkit.Main or another call as a value (actionkit.Main(reap.Run)):
// that package is the action's code, read like the main package itself.
func (a *metaAnalyzer) runPackages(main *metaPkg) []*metaPkg {
	var pkgs []*metaPkg
	for _, f := range main.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			for _, arg := range call.Args {
				sel, ok := ast.Unparen(arg).(*ast.SelectorExpr)
				if !ok {
					continue
				}
				id, ok := sel.X.(*ast.Ident)
				if !ok {
					continue
				}
				if p := a.modulePkg(f, id.Name); p != nil && !slices.Contains(pkgs, p) {
					if _, ok := p.funcs[sel.Sel.Name]; ok {
						pkgs = append(pkgs, p)
					}
				}
			}
			return true
		})
	}
	return pkgs
}

// directive records the names a //runpod-gpu:inputs comment lists.
func (a *metaAnalyzer) directive(text string) {
	rest, ok := strings.CutPrefix(text, metaInputsTag)
	if !ok || (rest != "" && rest[0] != ' ') {
		return
	}
	if a.use.listedInputs == nil {
		a.use.listedInputs = map[string]bool{}
	}
	for _, name := range strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' }) {
		a.use.listedInputs[name] = true
	}
}

// load parses the non-test Go files of the package in dir (once).
func (a *metaAnalyzer) load(dir string) *metaPkg {
	if p, ok := a.pkgs[dir]; ok {
		return p
	}
	p := &metaPkg{consts: map[string]metaDecl[ast.Expr]{}, funcs: map[string]metaDecl[*ast.FuncDecl]{},
		methods: map[string][]metaDecl[*ast.FuncDecl]{}, structs: map[string]*ast.StructType{}}
	a.pkgs[dir] = p
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil && a.err == nil {
		a.err = err
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(a.fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			if a.err == nil {
				a.err = err
			}
			continue
		}
		p.files = append(p.files, f)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					p.funcs[d.Name.Name] = metaDecl[*ast.FuncDecl]{d, f}
				} else if typ := metaRecvType(d.Recv.List[0].Type); typ != "" {
					p.methods[typ] = append(p.methods[typ], metaDecl[*ast.FuncDecl]{d, f})
				}
			case *ast.GenDecl:
				if d.Tok == token.TYPE {
					for _, spec := range d.Specs {
						if ts := spec.(*ast.TypeSpec); ts.TypeParams == nil {
							if st, ok := ts.Type.(*ast.StructType); ok {
								p.structs[ts.Name.Name] = st
							}
						}
					}
				}
				if d.Tok != token.CONST {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							p.consts[name.Name] = metaDecl[ast.Expr]{vs.Values[i], f}
						}
					}
				}
			}
		}
	}
	return p
}

// metaRecvType names a method's receiver type: T for T, *T, T[K] and *T[K].
func metaRecvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return metaRecvType(e.X)
	case *ast.IndexExpr:
		return metaRecvType(e.X)
	case *ast.IndexListExpr:
		return metaRecvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// modulePkg returns the module package a file imports under name, or nil.
func (a *metaAnalyzer) modulePkg(f *ast.File, name string) *metaPkg {
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local != name {
			continue
		}
		rest, ok := strings.CutPrefix(path, metaModule+"/")
		if !ok {
			return nil
		}
		return a.load(filepath.Join(a.root, filepath.FromSlash(rest)))
	}
	return nil
}

// isIOType reports whether e is *actionio.IO in file f.
func isIOType(f *ast.File, e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "IO" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && metaImportPath(f, pkg.Name) == metaActionIOPath
}

func metaImportPath(f *ast.File, name string) string {
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == name {
			return path
		}
	}
	return ""
}

// metaScope is what is known inside one function: which names hold the IO.
type metaScope struct {
	pkg      *metaPkg
	file     *ast.File
	ioVars   map[string]bool
	recv     string          // the receiver's name, in a method
	ioFields map[string]bool // the receiver's fields that hold the IO
	ranges   map[string]*ast.CompositeLit
}

func (s *metaScope) isIO(e ast.Expr) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return s.ioVars[e.Name]
	case *ast.SelectorExpr:
		id, ok := e.X.(*ast.Ident)
		return ok && s.recv != "" && id.Name == s.recv && s.ioFields[e.Sel.Name]
	}
	return false
}

// scanFunc scans one function or method (of type recvType, whose ioFields hold the IO).
func (a *metaAnalyzer) scanFunc(p *metaPkg, d metaDecl[*ast.FuncDecl], recvType string, ioFields map[string]bool) {
	key := fmt.Sprintf("%p.%s.%s.%v", p, recvType, d.node.Name.Name, metaSortedKeys(ioFields))
	if a.scanned[key] || d.node.Body == nil {
		return
	}
	a.scanned[key] = true
	s := &metaScope{pkg: p, file: d.file, ioVars: map[string]bool{}, ioFields: ioFields, ranges: map[string]*ast.CompositeLit{}}
	for _, field := range d.node.Type.Params.List {
		if isIOType(d.file, field.Type) {
			for _, n := range field.Names {
				s.ioVars[n.Name] = true
			}
		}
	}
	if d.node.Recv != nil && len(d.node.Recv.List[0].Names) > 0 {
		s.recv = d.node.Recv.List[0].Names[0].Name
	}
	a.scanBody(s, d.node.Body)
}

// metaIOMethods classifies the IO's methods that take an input name, read
// from pkg/actionio itself so that a new input method is followed without a
// change here: an exported method whose first parameter is `name` reads that
// input. (Outputs are written only by actionio.WriteOutputs.)
func (a *metaAnalyzer) metaIOMethods() map[string]string {
	if a.ioMethods != nil {
		return a.ioMethods
	}
	a.ioMethods = map[string]string{}
	p := a.load(filepath.Join(a.root, "pkg", "actionio"))
	for _, m := range p.methods["IO"] {
		params := m.node.Type.Params.List
		if !m.node.Name.IsExported() || len(params) == 0 || len(params[0].Names) == 0 || params[0].Names[0].Name != "name" {
			continue
		}
		a.ioMethods[m.node.Name.Name] = "input"
	}
	return a.ioMethods
}

func (a *metaAnalyzer) scanBody(s *metaScope, body *ast.BlockStmt) {
	handled := map[ast.Node]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt: // io := actionio.New(…)
			if len(n.Rhs) == 1 && a.isNewIO(s, n.Rhs[0]) {
				for _, lhs := range n.Lhs {
					if id, ok := lhs.(*ast.Ident); ok {
						s.ioVars[id.Name], handled[id] = true, true
					}
				}
			}
		case *ast.ValueSpec: // var io = actionio.New(…)
			if len(n.Values) == 1 && a.isNewIO(s, n.Values[0]) {
				for _, id := range n.Names {
					s.ioVars[id.Name], handled[id] = true, true
				}
			}
		case *ast.RangeStmt: // for _, row := range [][2]string{{"name", …}, …}
			if id, ok := n.Value.(*ast.Ident); ok {
				if lit, ok := ast.Unparen(n.X).(*ast.CompositeLit); ok {
					s.ranges[id.Name] = lit
				}
			}
		case *ast.FuncLit:
			for _, field := range n.Type.Params.List {
				for _, id := range field.Names {
					handled[id] = true
					if isIOType(s.file, field.Type) {
						s.ioVars[id.Name] = true
					}
				}
			}
		case *ast.CallExpr:
			if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && s.isIO(sel.X) {
				handled[ast.Unparen(sel.X)] = true
				a.ioCall(s, sel.Sel.Name, n)
			}
			for _, arg := range n.Args {
				if s.isIO(arg) {
					handled[ast.Unparen(arg)] = true
					a.follow(s, n)
				}
			}
		case *ast.CompositeLit:
			for _, el := range n.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				handled[kv.Key] = true // a field name, never the IO itself
				if s.isIO(kv.Value) {
					handled[ast.Unparen(kv.Value)] = true
					a.followField(s, n, kv)
				}
			}
		case *ast.SelectorExpr:
			handled[n.Sel] = true
			if x := ast.Unparen(n.X); s.isIO(x) && !handled[x] { // a method value such as Logf: io.Infof
				handled[x] = true
				if a.metaIOMethods()[n.Sel.Name] != "" {
					a.escape(n, "the IO's "+n.Sel.Name+" is used as a value the check cannot follow")
				}
			}
			if s.isIO(n) && !handled[n] {
				a.escape(n, "the IO is used in a way the check cannot follow")
			}
		case *ast.Ident:
			if s.isIO(n) && !handled[n] {
				a.escape(n, "the IO is used in a way the check cannot follow")
			}
		}
		return true
	})
}

func (a *metaAnalyzer) isNewIO(s *metaScope, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "New" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && metaImportPath(s.file, pkg.Name) == metaActionIOPath
}

func (a *metaAnalyzer) escape(n ast.Node, what string) {
	a.use.escapes = append(a.use.escapes, fmt.Sprintf("%s: %s", a.pos(n), what))
}

// pos is a node's position relative to the repository (or the file's base name
// outside it), for messages.
func (a *metaAnalyzer) pos(n ast.Node) string {
	p := a.fset.Position(n.Pos())
	name := filepath.Base(p.Filename)
	if abs, err := filepath.Abs(a.root); err == nil {
		if file, err := filepath.Abs(p.Filename); err == nil {
			if rel, err := filepath.Rel(abs, file); err == nil && !strings.HasPrefix(rel, "..") {
				name = filepath.ToSlash(rel)
			}
		}
	}
	return fmt.Sprintf("%s:%d", name, p.Line)
}

// ioCall records a call of one of the IO's methods.
func (a *metaAnalyzer) ioCall(s *metaScope, method string, call *ast.CallExpr) {
	if a.metaIOMethods()[method] != "input" || len(call.Args) == 0 {
		return
	}
	names, ok := a.names(s.pkg, s.file, s.ranges, call.Args[0])
	if !ok {
		a.use.dynamicInputs = append(a.use.dynamicInputs, a.pos(call))
		return
	}
	for _, name := range names {
		if _, seen := a.use.inputs[name]; !seen {
			a.use.inputs[name] = a.pos(call)
		}
	}
}

// names evaluates a constant string expression; a range row's element gives
// one name per row.
func (a *metaAnalyzer) names(p *metaPkg, f *ast.File, ranges map[string]*ast.CompositeLit, e ast.Expr) ([]string, bool) {
	switch e := ast.Unparen(e).(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return nil, false
		}
		s, err := strconv.Unquote(e.Value)
		return []string{s}, err == nil
	case *ast.Ident:
		if c, ok := p.consts[e.Name]; ok {
			return a.names(p, c.file, nil, c.node)
		}
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if other := a.modulePkg(f, id.Name); other != nil {
				if c, ok := other.consts[e.Sel.Name]; ok {
					return a.names(other, c.file, nil, c.node)
				}
			}
		}
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return nil, false
		}
		x, okX := a.names(p, f, nil, e.X)
		y, okY := a.names(p, f, nil, e.Y)
		if okX && okY && len(x) == 1 && len(y) == 1 {
			return []string{x[0] + y[0]}, true
		}
	case *ast.IndexExpr:
		row, ok := e.X.(*ast.Ident)
		idx, okIdx := e.Index.(*ast.BasicLit)
		lit := ranges[row.Name]
		if !ok || !okIdx || idx.Kind != token.INT || lit == nil {
			return nil, false
		}
		i, err := strconv.Atoi(idx.Value)
		if err != nil {
			return nil, false
		}
		var out []string
		for _, el := range lit.Elts {
			rowLit, ok := el.(*ast.CompositeLit)
			if !ok || i >= len(rowLit.Elts) {
				return nil, false
			}
			names, ok := a.names(p, f, nil, rowLit.Elts[i])
			if !ok {
				return nil, false
			}
			out = append(out, names...)
		}
		return out, true
	}
	return nil, false
}

// follow scans the package-level function the IO is passed to, or reads the
// typed outputs actionio.WriteOutputs writes.
func (a *metaAnalyzer) follow(s *metaScope, call *ast.CallExpr) {
	fun := ast.Unparen(call.Fun)
	var typeArg ast.Expr
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun, typeArg = ix.X, ix.Index
	}
	if a.isWriteOutputs(s, fun) {
		if typeArg == nil && len(call.Args) == 2 { // the type of a composite literal is written out too
			if lit, ok := ast.Unparen(call.Args[1]).(*ast.CompositeLit); ok {
				typeArg = lit.Type
			}
		}
		a.typedOutputs(s, typeArg, call)
		return
	}
	switch fun := fun.(type) {
	case *ast.Ident:
		if d, ok := s.pkg.funcs[fun.Name]; ok {
			a.scanFunc(s.pkg, d, "", nil)
			return
		}
	case *ast.SelectorExpr:
		if id, ok := fun.X.(*ast.Ident); ok && !s.ioVars[id.Name] {
			if p := a.modulePkg(s.file, id.Name); p != nil {
				if d, ok := p.funcs[fun.Sel.Name]; ok {
					a.scanFunc(p, d, "", nil)
					return
				}
			}
		}
	}
	a.escape(call, "the IO is passed to a call the check cannot follow")
}

// isWriteOutputs reports whether fun is actionio.WriteOutputs.
func (a *metaAnalyzer) isWriteOutputs(s *metaScope, fun ast.Expr) bool {
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "WriteOutputs" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && metaImportPath(s.file, pkg.Name) == metaActionIOPath
}

// typedOutputs records the outputs a WriteOutputs call writes: the tagged
// fields of its struct type, declared in the action or a module package.
func (a *metaAnalyzer) typedOutputs(s *metaScope, typ ast.Expr, call *ast.CallExpr) {
	var p *metaPkg
	var name string
	switch t := typ.(type) {
	case *ast.Ident:
		p, name = s.pkg, t.Name
	case *ast.SelectorExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			p, name = a.modulePkg(s.file, id.Name), t.Sel.Name
		}
	}
	if p == nil || p.structs[name] == nil {
		a.escape(call, "the outputs' type is not a struct type of the module named at the call; write actionio.WriteOutputs[T](io, v)")
		return
	}
	for _, f := range p.structs[name].Fields.List {
		if f.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		out, ok := reflect.StructTag(tag).Lookup(metaOutputTag)
		if err != nil || !ok {
			continue
		}
		out, _, _ = strings.Cut(out, ",")
		if _, seen := a.use.outputs[out]; !seen {
			a.use.outputs[out] = a.pos(call)
		}
	}
}

// followField scans the methods of a type whose field is set to the IO.
func (a *metaAnalyzer) followField(s *metaScope, lit *ast.CompositeLit, kv *ast.KeyValueExpr) {
	field, ok := kv.Key.(*ast.Ident)
	var p *metaPkg
	var typ string
	switch t := lit.Type.(type) {
	case *ast.Ident:
		p, typ = s.pkg, t.Name
	case *ast.SelectorExpr:
		if id, ok := t.X.(*ast.Ident); ok {
			p, typ = a.modulePkg(s.file, id.Name), t.Sel.Name
		}
	}
	if !ok || p == nil {
		a.escape(kv, "the IO is stored in a value the check cannot follow")
		return
	}
	for _, m := range p.methods[typ] {
		a.scanFunc(p, m, typ, map[string]bool{field.Name: true})
	}
}

// TestMetaActionMetadata checks every action.yml in the repository: its
// metadata, and that its inputs and outputs are exactly those its code uses.
func TestMetaActionMetadata(t *testing.T) {
	for _, name := range metaActionDirs(t) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(metaRepoRoot, "actions", name)
			data, err := os.ReadFile(filepath.Join(dir, "action.yml"))
			assert.NilError(t, err)
			action, err := metaLoadActionYML(data)
			assert.NilError(t, err, "actions/%s/action.yml", name)
			use, err := metaAnalyzeAction(metaRepoRoot, dir)
			assert.NilError(t, err)
			problems := append(metaCheckMetadata(name, action), metaCompare(action, use)...)
			assert.Check(t, len(problems) == 0, "actions/%s:\n  %s", name, strings.Join(problems, "\n  "))
		})
	}
}

// TestMetaProvisionOutputsThroughObserver proves the analysis follows the IO
// into an observer and into a package: provision's created-pod-ids is written
// only by the action's observer, and its credentials are read in actionkit.
func TestMetaProvisionOutputsThroughObserver(t *testing.T) {
	use, err := metaAnalyzeAction(metaRepoRoot, filepath.Join(metaRepoRoot, "actions", "provision"))
	assert.NilError(t, err)
	assert.Check(t, strings.HasPrefix(use.outputs["created-pod-ids"], "pkg/actions/provision/observer.go:"), "written at %q", use.outputs["created-pod-ids"])
	assert.Check(t, use.outputs["pod-id"] != "")
	for _, name := range []string{"runpod-api-key", "runpod-api-url", "app-private-key"} {
		assert.Check(t, strings.HasPrefix(use.inputs[name], "pkg/actionkit/"), "input %s read at %q", name, use.inputs[name])
	}
}

// TestMetaIOMethodsFromActionio pins the derivation of the IO's input
// methods: if actionio's parameter naming changed, nothing would be found.
func TestMetaIOMethodsFromActionio(t *testing.T) {
	a := &metaAnalyzer{root: metaRepoRoot, fset: token.NewFileSet(), pkgs: map[string]*metaPkg{}}
	methods := a.metaIOMethods()
	assert.NilError(t, a.err)
	for _, m := range []string{"Input", "InputOr", "RequiredInput", "SecretInput", "Bool", "Int", "Duration", "Lines"} {
		assert.Check(t, is.Equal(methods[m], "input"), m)
	}
	for _, m := range []string{"Getenv", "Mask", "AddSummary", "Infof", "setOutput"} {
		assert.Check(t, is.Equal(methods[m], ""), m)
	}
}

// metaFixtureYML is a consistent action.yml for metaFixtureMain; cases edit it.
const metaFixtureYML = `name: fixture
description: A fixture action.
author: runpod-gpu
branding: {icon: cpu, color: purple}
inputs:
  pr-number: {description: The PR., required: false, default: "0"}
outputs:
  result: {description: The result.}
runs:
  using: docker
  image: docker://ghcr.io/org/runpod-gpu:v1
  entrypoint: /runpod-gpu-actions
  args: [fixture]
`

// metaFixtureMain wraps a run body in an action main package.
func metaFixtureMain(imports, decls, body string) string {
	return `package main

import (
	"os"

	"github.com/org/runpod-gpu/pkg/actionio"
` + imports + `
)

func main() {
	io := actionio.New(os.Stdout, os.Getenv, nil)
	if err := run(io); err != nil {
		os.Exit(1)
	}
}

func run(io *actionio.IO) error {
` + body + `
	return nil
}

// result is the fixture's typed outputs.
type result struct {
	Result string ` + "`output:\"result\"`" + `
	Note   string // untagged: no output
}
` + decls
}

// TestMetaConsistencyDetectsMismatches plants each kind of mismatch in an
// in-memory action and checks that exactly it is reported.
func TestMetaConsistencyDetectsMismatches(t *testing.T) {
	const readPR = `	if _, err := io.Int("pr-number", 0, 0, 1<<31); err != nil {
		return err
	}
`
	const writeResult = `	_ = actionio.WriteOutputs[result](io, result{Result: "ok"})
`
	tests := []struct {
		name      string
		yml       string
		imports   string
		decls     string // declarations after the fixture's own
		body      string
		wantProbs []string // each is contained in the problem at the same index
	}{
		{name: "consistent", yml: metaFixtureYML, body: readPR + writeResult},
		{
			name:      "declared input never read",
			yml:       strings.Replace(metaFixtureYML, "inputs:\n", "inputs:\n  unused: {description: Never read., required: false, default: \"\"}\n", 1),
			body:      readPR + writeResult,
			wantProbs: []string{`input "unused" is declared in action.yml but the code never reads it`},
		},
		{
			name:      "input read but not declared",
			yml:       metaFixtureYML,
			body:      readPR + writeResult + "\t_, _ = io.Bool(\"keep-failed-pods\", false)\n",
			wantProbs: []string{`input "keep-failed-pods" is read at main.go:`},
		},
		{
			name:      "output written but not declared",
			yml:       metaFixtureYML,
			decls:     "type extra struct {\n\tExtra string `output:\"extra,omitempty\"`\n}\n",
			body:      readPR + writeResult + "\t_ = actionio.WriteOutputs[extra](io, extra{Extra: \"x\"})\n",
			wantProbs: []string{`output "extra" is written at main.go:`},
		},
		{
			name:      "declared output never written",
			yml:       metaFixtureYML,
			body:      readPR,
			wantProbs: []string{`output "result" is declared in action.yml but the code never writes it`},
		},
		{
			name:      "credentials read inside actionkit",
			yml:       strings.Replace(metaFixtureYML, "inputs:\n", "inputs:\n  runpod-api-key: {description: Key., required: true}\n", 1),
			imports:   "\t\"github.com/org/runpod-gpu/pkg/actionkit\"",
			body:      readPR + writeResult + "\t_, _, _ = actionkit.RunPod(io)\n",
			wantProbs: []string{`input "runpod-api-url" is read at pkg/actionkit/actionkit.go:`},
		},
		{
			name:    "constant of another module package",
			yml:     strings.Replace(metaFixtureYML, "inputs:\n", "inputs:\n  sha: {description: SHA., required: true}\n", 1),
			imports: "\t\"github.com/org/runpod-gpu/pkg/localgate\"",
			body:    readPR + writeResult + "\t_ = io.Input(localgate.InputSHA)\n",
		},
		{
			name:      "names from the rows of a range",
			yml:       metaFixtureYML,
			body:      readPR + writeResult + "\tfor _, in := range [][1]string{{\"pr-number\"}, {\"other\"}} {\n\t\t_ = io.Input(in[0])\n\t}\n",
			wantProbs: []string{`input "other" is read at main.go:`},
		},
		{
			name: "computed input name without the directive",
			yml:  metaFixtureYML,
			body: readPR + writeResult + "\tfor _, k := range os.Args {\n\t\t_ = io.Input(k)\n\t}\n",
			wantProbs: []string{
				`the input name is not a constant; list the names in a //runpod-gpu:inputs comment`,
			},
		},
		{
			name: "computed input name listed by the directive",
			yml:  metaFixtureYML,
			body: readPR + writeResult + "\t//runpod-gpu:inputs pr-number\n\tfor _, k := range os.Args {\n\t\t_ = io.Input(k)\n\t}\n",
		},
		{
			name:      "directive lists an undeclared input",
			yml:       metaFixtureYML,
			body:      readPR + writeResult + "\t//runpod-gpu:inputs pr-number,stale\n",
			wantProbs: []string{`input "stale" is listed in //runpod-gpu:inputs but action.yml does not declare it`},
		},
		{
			name: "outputs written by an observer",
			yml:  strings.Replace(metaFixtureYML, "outputs:\n", "outputs:\n  pod-id: {description: Pod.}\n", 1),
			decls: "type observer struct{ io *actionio.IO }\n\n" +
				"func (o *observer) created(id string) { _ = actionio.WriteOutputs[pod](o.io, pod{ID: id, All: id}) }\n\n" +
				"type pod struct {\n\tID  string `output:\"pod-id\"`\n\tAll string `output:\"created-pod-ids\"`\n}\n",
			body:      readPR + writeResult + "\tobs := &observer{io: io}\n\tobs.created(\"p1\")\n",
			wantProbs: []string{`output "created-pod-ids" is written at main.go:`},
		},
		{
			name:    "typed outputs of a module package",
			yml:     strings.Replace(metaFixtureYML, "  result: {description: The result.}\n", "  report-json: {description: JSON.}\n", 1),
			imports: "\t\"github.com/org/runpod-gpu/pkg/gate\"",
			body:    readPR + "\t_ = actionio.WriteOutputs(io, gate.AuthorizeOutputs{})\n",
			wantProbs: []string{
				`output "report-json" is declared in action.yml but the code never writes it`,
				`output "decision" is written at main.go:`, `output "gate-check-run-id" is written at main.go:`, `output "gate-kind" is written at main.go:`,
				`output "head-sha" is written at main.go:`, `output "lane-image" is written at main.go:`, `output "reason" is written at main.go:`,
				`output "reused-check-url" is written at main.go:`, `output "tested-ref" is written at main.go:`, `output "tree-key" is written at main.go:`,
			},
		},
		{
			name: "outputs whose type is not written out",
			yml:  metaFixtureYML,
			body: readPR + "\tvar out result\n\t_ = actionio.WriteOutputs(io, out)\n",
			wantProbs: []string{
				`output "result" is declared in action.yml but the code never writes it`,
				`the outputs' type is not a struct type of the module named at the call; write actionio.WriteOutputs[T](io, v)`,
			},
		},
		{
			name: "a log method as a value",
			yml:  metaFixtureYML,
			body: readPR + writeResult + "\tlogf := io.Infof\n\tlogf(\"done\")\n",
		},
		{
			name:      "an input method as a value",
			yml:       metaFixtureYML,
			body:      readPR + writeResult + "\tget := io.Input\n\t_ = get(\"pr-number\")\n",
			wantProbs: []string{`the IO's Input is used as a value the check cannot follow`},
		},
		{
			name:      "IO handed to a method",
			yml:       metaFixtureYML,
			body:      readPR + writeResult + "\tvar sink struct{ Use func(*actionio.IO) }\n\tsink.Use(io)\n",
			wantProbs: []string{`the IO is passed to a call the check cannot follow; pass it to a package-level function`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := fs.NewDir(t, "meta-action",
				fs.WithFile("action.yml", tc.yml),
				fs.WithFile("main.go", metaFixtureMain(tc.imports, tc.decls, tc.body)))
			action, err := metaLoadActionYML([]byte(tc.yml))
			assert.NilError(t, err)
			use, err := metaAnalyzeAction(metaRepoRoot, dir.Path())
			assert.NilError(t, err)
			problems := append(metaCheckMetadata("fixture", action), metaCompare(action, use)...)
			assert.Equal(t, len(problems), len(tc.wantProbs), "problems:\n  %s", strings.Join(problems, "\n  "))
			for i, want := range tc.wantProbs {
				assert.Check(t, is.Contains(problems[i], want))
			}
		})
	}
}

// TestMetaMetadataDetectsProblems plants each metadata mistake and checks that
// it is reported.
func TestMetaMetadataDetectsProblems(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(string) string
		wantErr string // from decoding
		want    []string
	}{
		{name: "valid", edit: func(s string) string { return s }},
		{
			name: "entrypoint of a program per action",
			edit: func(s string) string {
				return strings.Replace(s, "entrypoint: /runpod-gpu-actions", "entrypoint: /fixture", 1)
			},
			want: []string{`runs.entrypoint "/fixture": want "/runpod-gpu-actions"`},
		},
		{
			name: "role of another action",
			edit: func(s string) string { return strings.Replace(s, "args: [fixture]", "args: [provision]", 1) },
			want: []string{`runs.args ["provision"]: want ["fixture"]`},
		},
		{
			name: "no role",
			edit: func(s string) string { return strings.Replace(s, "  args: [fixture]\n", "", 1) },
			want: []string{`runs.args []: want ["fixture"]`},
		},
		{
			name: "not a docker action",
			edit: func(s string) string {
				return strings.Replace(strings.Replace(s, "using: docker", "using: node20", 1), "image: docker://ghcr.io/org/runpod-gpu:v1", "image: Dockerfile", 1)
			},
			want: []string{`runs.using "node20": want docker`, `runs.image "Dockerfile": want docker://ghcr.io/org/runpod-gpu:v1`},
		},
		{
			name: "image pinned by digest",
			edit: func(s string) string {
				return strings.Replace(s, ":v1", "@sha256:"+strings.Repeat("ab", 32), 1)
			},
		},
		{
			name: "undocumented input and output, optional input without default",
			edit: func(s string) string {
				s = strings.Replace(s, "{description: The PR., required: false, default: \"0\"}", "{required: false}", 1)
				return strings.Replace(s, "{description: The result.}", "{description: \"\"}", 1)
			},
			want: []string{`input "pr-number" has no description`, `input "pr-number" is optional but declares no default`, `output "result" has no description`},
		},
		{
			name: "missing branding and description",
			edit: func(s string) string {
				s = strings.Replace(s, "description: A fixture action.\n", "", 1)
				return strings.Replace(s, "branding: {icon: cpu, color: purple}\n", "", 1)
			},
			want: []string{"description is missing", "branding.icon is missing", `branding.color "": want one of`},
		},
		{
			name: "Marketplace metadata",
			edit: func(s string) string {
				s = strings.Replace(s, "author: runpod-gpu\n", "", 1)
				return strings.Replace(s, "description: A fixture action.", "description: "+strings.Repeat("x", 126), 1)
			},
			want: []string{"description is 126 characters: the Marketplace shows at most 125", "author is missing"},
		},
		{
			name: "misspelt key",
			edit: func(s string) string {
				return strings.Replace(s, "description: A fixture action.", "descripton: A fixture action.", 1)
			},
			wantErr: "field descripton not found",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			action, err := metaLoadActionYML([]byte(tc.edit(metaFixtureYML)))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			problems := metaCheckMetadata("fixture", action)
			assert.Equal(t, len(problems), len(tc.want), "problems:\n  %s", strings.Join(problems, "\n  "))
			for i, want := range tc.want {
				assert.Check(t, is.Contains(problems[i], want))
			}
		})
	}
}

// metaSharedInputs are the inputs several actions declare, read through
// actionkit: each must mean the same everywhere, so one caller's with: block
// reads the same for every action.
// metaModeOptional names, per action, the shared input it may declare
// optional because one of its modes calls nothing (serverless's prepare mode
// only hashes the sources, in a job that holds no secret).
var metaModeOptional = map[string]string{"serverless": "runpod-api-key"}

var metaSharedInputs = []string{"github-token", "app-id", "app-installation-id", "app-private-key", "runpod-api-key", "runpod-api-url"}

// metaInputNameRE is the one naming style of inputs: lower-case kebab-case.
var metaInputNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// metaCheckSuiteMetadata lists where the actions, by directory, disagree:
// one author, one branding colour, names that start with "RunPod GPU " and
// are unique, kebab-case inputs, github-token defaulting to the workflow
// token everywhere, and each shared input declared alike.
func metaCheckSuiteMetadata(actions map[string]metaActionYML) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	dirs := metaSortedKeys(actions)
	if len(dirs) == 0 {
		return nil
	}
	first := actions[dirs[0]]
	names := map[string]string{}
	for _, dir := range dirs {
		a := actions[dir]
		if a.Author != first.Author {
			add("actions/%s: author %q, but actions/%s has %q: one author", dir, a.Author, dirs[0], first.Author)
		}
		if a.Branding.Color != first.Branding.Color {
			add("actions/%s: branding.color %q, but actions/%s has %q: one colour", dir, a.Branding.Color, dirs[0], first.Branding.Color)
		}
		if !strings.HasPrefix(a.Name, "RunPod GPU ") {
			add("actions/%s: name %q: want \"RunPod GPU <role>\"", dir, a.Name)
		}
		if other, ok := names[a.Name]; ok {
			add("actions/%s: name %q is also actions/%s's (Marketplace names are unique)", dir, a.Name, other)
		}
		names[a.Name] = dir
		for _, in := range metaSortedKeys(a.Inputs) {
			if !metaInputNameRE.MatchString(in) {
				add("actions/%s: input %q: want kebab-case, like the other inputs", dir, in)
			}
		}
		if tok, ok := a.Inputs["github-token"]; ok && (tok.Required || tok.Default == nil || *tok.Default != "${{ github.token }}") {
			add("actions/%s: input github-token: want optional with default ${{ github.token }}", dir)
		}
	}
	for _, in := range metaSharedInputs {
		var ref string
		for _, dir := range dirs {
			got, ok := actions[dir].Inputs[in]
			if !ok {
				continue
			}
			if ref == "" {
				ref = dir
				continue
			}
			want := actions[ref].Inputs[in]
			if metaModeOptional[dir] == in {
				continue // one of its modes needs no such input (documented in its description)
			}
			if got.Required != want.Required || (got.Default == nil) != (want.Default == nil) || (got.Default != nil && *got.Default != *want.Default) {
				add("actions/%s: input %s is declared unlike actions/%s's (required, default)", dir, in, ref)
			}
		}
	}
	return problems
}

// TestMetaActionsAgree checks the suite's action.yml files against each
// other, as Marketplace readers and callers see them side by side.
func TestMetaActionsAgree(t *testing.T) {
	actions := map[string]metaActionYML{}
	for _, name := range metaActionDirs(t) {
		data, err := os.ReadFile(filepath.Join(metaRepoRoot, "actions", name, "action.yml"))
		assert.NilError(t, err)
		actions[name], err = metaLoadActionYML(data)
		assert.NilError(t, err, "actions/%s/action.yml", name)
	}
	problems := metaCheckSuiteMetadata(actions)
	assert.Check(t, len(problems) == 0, "\n  %s", strings.Join(problems, "\n  "))
}

// TestMetaSuiteMetadataDetectsDisagreements plants each disagreement in a
// second copy of the fixture action.
func TestMetaSuiteMetadataDetectsDisagreements(t *testing.T) {
	const base = "name: RunPod GPU one\ndescription: One.\nauthor: runpod-gpu\nbranding: {icon: cpu, color: purple}\n" +
		"inputs:\n  github-token: {description: Token., required: false, default: \"${{ github.token }}\"}\n" +
		"runs: {using: docker, image: \"docker://ghcr.io/org/runpod-gpu:v1\", entrypoint: /one}\n"
	tests := []struct {
		name string
		edit func(string) string
		want []string
	}{
		{name: "agree", edit: func(s string) string { return strings.Replace(s, "RunPod GPU one", "RunPod GPU two", 1) }},
		{name: "two authors", edit: func(s string) string {
			return strings.NewReplacer("RunPod GPU one", "RunPod GPU two", "author: runpod-gpu", "author: org").Replace(s)
		}, want: []string{`actions/two: author "org", but actions/one has "runpod-gpu": one author`}},
		{name: "two colours", edit: func(s string) string {
			return strings.NewReplacer("RunPod GPU one", "RunPod GPU two", "color: purple", "color: green").Replace(s)
		}, want: []string{`actions/two: branding.color "green", but actions/one has "purple": one colour`}},
		{name: "same name", edit: func(s string) string { return s },
			want: []string{`actions/two: name "RunPod GPU one" is also actions/one's (Marketplace names are unique)`}},
		{name: "another naming", edit: func(s string) string { return strings.Replace(s, "RunPod GPU one", "runpod-gpu two", 1) },
			want: []string{`actions/two: name "runpod-gpu two": want "RunPod GPU <role>"`}},
		{name: "token without the workflow default", edit: func(s string) string {
			return strings.NewReplacer("RunPod GPU one", "RunPod GPU two", `default: "${{ github.token }}"`, `default: ""`).Replace(s)
		}, want: []string{
			"actions/two: input github-token: want optional with default ${{ github.token }}",
			"actions/two: input github-token is declared unlike actions/one's (required, default)",
		}},
		{name: "snake_case input", edit: func(s string) string {
			return strings.NewReplacer("RunPod GPU one", "RunPod GPU two", "github-token:", "github_token:").Replace(s)
		}, want: []string{`actions/two: input "github_token": want kebab-case, like the other inputs`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			one, err := metaLoadActionYML([]byte(base))
			assert.NilError(t, err)
			two, err := metaLoadActionYML([]byte(tc.edit(base)))
			assert.NilError(t, err)
			got := metaCheckSuiteMetadata(map[string]metaActionYML{"one": one, "two": two})
			if tc.want == nil {
				assert.Check(t, is.Len(got, 0), "%v", got)
				return
			}
			assert.Check(t, is.DeepEqual(got, tc.want))
		})
	}
}
