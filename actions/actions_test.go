package actions

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/actionio"
)

// roomDirs are the actions/<role> directories that hold an action.yml.
func roomDirs(t *testing.T) []string {
	t.Helper()
	ymls, err := filepath.Glob(filepath.Join("*", "action.yml"))
	assert.NilError(t, err)
	var roles []string
	for _, y := range ymls {
		roles = append(roles, filepath.Dir(y))
	}
	assert.Assert(t, len(roles) > 0)
	return roles
}

// TestEveryRoomIsARole: each actions/<role>/ with an action.yml has its role
// in All, runs it with args [<role>], and has a README; each role has its room.
func TestEveryRoomIsARole(t *testing.T) {
	all := All()
	rooms := roomDirs(t)
	for _, role := range rooms {
		a, ok := all[role]
		if !assert.Check(t, ok, "actions/%s has no role in All: the image could not run it", role) {
			continue
		}
		assert.Check(t, a != nil)
		meta := readActionYML(t, role)
		assert.Check(t, is.DeepEqual(meta.Runs.Args, []string{role}), "actions/%s/action.yml runs.args", role)
		_, err := os.Stat(filepath.Join(role, "README.md"))
		assert.Check(t, err, "actions/%s has no README.md", role)
	}
	for role := range all {
		assert.Check(t, slices.Contains(rooms, role), "role %s has no actions/%s/action.yml", role, role)
	}
}

// actionYML is the part of an action.yml these tests compare with the code.
type actionYML struct {
	Inputs  map[string]yaml.Node `yaml:"inputs"`
	Outputs map[string]yaml.Node `yaml:"outputs"`
	Runs    struct {
		Args []string `yaml:"args"`
	} `yaml:"runs"`
}

func readActionYML(t *testing.T, role string) actionYML {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(role, "action.yml"))
	assert.NilError(t, err)
	var a actionYML
	assert.NilError(t, yaml.Unmarshal(b, &a), "actions/%s/action.yml", role)
	return a
}

// TestActionYMLInputsFollowTheirStruct: every action.yml's inputs block is
// exactly what its inputs struct declares (names, descriptions, required,
// defaults, in field order). Run with -update to rewrite it from the struct.
func TestActionYMLInputsFollowTheirStruct(t *testing.T) {
	for role, a := range All() {
		t.Run(role, func(t *testing.T) {
			specs, err := actionio.InputSpecs(a.Inputs())
			assert.NilError(t, err)
			path := filepath.Join(role, "action.yml")
			b, err := os.ReadFile(path)
			assert.NilError(t, err)
			got, err := replaceInputsBlock(string(b), inputsBlock(specs))
			assert.NilError(t, err, "actions/%s/action.yml", role)
			if golden.FlagUpdate() { // go test ./actions -run TestActionYMLInputsFollowTheirStruct -update
				assert.NilError(t, os.WriteFile(path, []byte(got), 0o644))
				return
			}
			assert.Check(t, is.Equal(string(b), got), "actions/%s/action.yml differs from %s: run go test ./actions -run %s -update",
				role, a.Inputs(), t.Name())
		})
	}
}

// TestActionYMLOutputsAreTheDeclaredOnes: every action.yml declares exactly
// the outputs of the types its action writes (and RestrictOutputs lets it
// write no other).
func TestActionYMLOutputsAreTheDeclaredOnes(t *testing.T) {
	for role, a := range All() {
		t.Run(role, func(t *testing.T) {
			var declared []string
			for _, typ := range a.Outputs() {
				names, err := actionio.OutputNames(typ)
				assert.NilError(t, err)
				declared = append(declared, names...)
			}
			slices.Sort(declared)
			declared = slices.Compact(declared) // provision writes pod-id early and again at the end
			var inFile []string
			for name := range readActionYML(t, role).Outputs {
				inFile = append(inFile, name)
			}
			slices.Sort(inFile)
			assert.Check(t, is.DeepEqual(declared, inFile), "outputs of %s's types (left) and of actions/%s/action.yml (right)", role, role)
		})
	}
}

// TestActionsWriteOnlyDeclaredOutputTypes: every actionio.WriteOutputs[T] in an
// action's room names a type the action declares, so the check above covers
// every output the code can write.
func TestActionsWriteOnlyDeclaredOutputTypes(t *testing.T) {
	for role, a := range All() {
		t.Run(role, func(t *testing.T) {
			declared := map[string]bool{}
			for _, typ := range a.Outputs() {
				declared[typ.Name()] = true
			}
			written := writtenOutputTypes(t, role)
			assert.Assert(t, len(written) > 0, "actions/%s writes no outputs through actionio.WriteOutputs", role)
			for _, w := range written {
				assert.Check(t, declared[w.name], "%s: WriteOutputs[%s]: the action does not declare that type (actionkit.NewAction's outputs)", w.at, w.name)
			}
		})
	}
}

type writtenType struct{ name, at string }

// writtenOutputTypes finds the type arguments of WriteOutputs calls in dir's
// Go files, by their unqualified name.
func writtenOutputTypes(t *testing.T, dir string) []writtenType {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	assert.NilError(t, err)
	fset := token.NewFileSet()
	var out []writtenType
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		assert.NilError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			ix, ok := n.(*ast.IndexExpr)
			if !ok {
				return true
			}
			if sel, ok := ix.X.(*ast.SelectorExpr); !ok || sel.Sel.Name != "WriteOutputs" {
				return true
			}
			name := ""
			switch arg := ix.Index.(type) {
			case *ast.Ident:
				name = arg.Name
			case *ast.SelectorExpr:
				name = arg.Sel.Name
			}
			out = append(out, writtenType{name: name, at: fset.Position(ix.Pos()).String()})
			return true
		})
	}
	return out
}

// descriptionWidth is where a description is folded onto several lines.
const descriptionWidth = 100

// inputsBlock renders the inputs an action declares as action.yml's inputs
// mapping, in declaration order.
func inputsBlock(specs []actionio.InputSpec) string {
	var b strings.Builder
	b.WriteString("inputs:\n")
	for _, s := range specs {
		fmt.Fprintf(&b, "  %s:\n", s.Name)
		writeDescription(&b, s.Description)
		if s.Required {
			b.WriteString("    required: true\n")
			continue
		}
		b.WriteString("    required: false\n")
		fmt.Fprintf(&b, "    default: %s\n", strconv.Quote(s.Default))
	}
	return b.String()
}

// writeDescription writes one line when it fits and reads back unchanged as a
// plain scalar, else a folded block.
func writeDescription(b *strings.Builder, d string) {
	line := "    description: " + d
	var back struct{ Description string }
	if len(line) <= descriptionWidth+16 && yaml.Unmarshal([]byte(strings.TrimSpace(line)), &back) == nil && back.Description == d {
		b.WriteString(line + "\n")
		return
	}
	b.WriteString("    description: >-\n")
	cur := ""
	for _, w := range strings.Fields(d) {
		if cur != "" && len(cur)+1+len(w) > descriptionWidth {
			b.WriteString("      " + cur + "\n")
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	b.WriteString("      " + cur + "\n")
}

// replaceInputsBlock swaps the top-level inputs: block of an action.yml (up
// to the next top-level key) for block.
func replaceInputsBlock(file, block string) (string, error) {
	lines := strings.SplitAfter(file, "\n")
	start, end := -1, len(lines)
	for i, l := range lines {
		switch {
		case start < 0 && strings.HasPrefix(l, "inputs:"):
			start = i
		case start >= 0 && l != "" && l[0] != ' ' && l[0] != '\n' && l[0] != '#':
			end = i
		}
		if start >= 0 && end < len(lines) {
			break
		}
	}
	if start < 0 {
		return "", fmt.Errorf("no top-level inputs: block")
	}
	return strings.Join(lines[:start], "") + block + strings.Join(lines[end:], ""), nil
}

// TestInputsBlockReadsBackAsDeclared: what the generator writes decodes to
// the declared descriptions, required flags and defaults, whatever their text.
func TestInputsBlockReadsBackAsDeclared(t *testing.T) {
	specs := []actionio.InputSpec{
		{Name: "a", Description: "Plain: with a colon, a # hash and `code`.", Default: "${{ github.token }}"},
		{Name: "b", Description: strings.Repeat("a long description that folds ", 12) + "end.", Required: true},
		{Name: "c", Description: "- starts like a list", Default: `quote " and \ slash`},
		{Name: "d", Description: "'quoted' start", Default: ""},
	}
	var back struct {
		Inputs map[string]struct {
			Description string  `yaml:"description"`
			Required    bool    `yaml:"required"`
			Default     *string `yaml:"default"`
		} `yaml:"inputs"`
	}
	assert.NilError(t, yaml.Unmarshal([]byte(inputsBlock(specs)), &back))
	for _, s := range specs {
		got := back.Inputs[s.Name]
		assert.Check(t, is.Equal(got.Description, s.Description), s.Name)
		assert.Check(t, is.Equal(got.Required, s.Required), s.Name)
		if s.Required {
			assert.Check(t, got.Default == nil, s.Name)
		} else if assert.Check(t, got.Default != nil, s.Name) {
			assert.Check(t, is.Equal(*got.Default, s.Default), s.Name)
		}
	}
}

// TestEveryActionDeclaresItsInputsWell: each inputs struct is well formed
// and every input is described.
func TestEveryActionDeclaresItsInputsWell(t *testing.T) {
	for role, a := range All() {
		specs, err := actionio.InputSpecs(a.Inputs())
		if !assert.Check(t, err, role) {
			continue
		}
		for _, s := range specs {
			assert.Check(t, strings.TrimSpace(s.Description) != "", "%s: input %s has no desc tag", role, s.Name)
		}
		assert.Check(t, a.Inputs().Kind() == reflect.Struct)
	}
}
