package rules

// Every actions/<name>/action.yml is checked for the metadata GitHub, the
// Marketplace and the image need, alone and against the other actions. That
// its inputs and outputs are exactly those its code declares is the actions
// package's own test (actions/actions_test.go): each action declares its
// inputs as one struct and its outputs as typed structs, and can read and
// write nothing else.
import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaModule is this repository's module path.
const metaModule = "github.com/org/runpod-gpu"

// metaRepoRoot is the repository root, seen from this package's directory.
const metaRepoRoot = "../.."

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

func metaSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestMetaActionMetadata checks every action.yml in the repository for
// the metadata GitHub and this suite need.
func TestMetaActionMetadata(t *testing.T) {
	for _, name := range metaActionDirs(t) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(metaRepoRoot, "actions", name, "action.yml"))
			assert.NilError(t, err)
			action, err := metaLoadActionYML(data)
			assert.NilError(t, err, "actions/%s/action.yml", name)
			problems := metaCheckMetadata(name, action)
			assert.Check(t, len(problems) == 0, "actions/%s:\n  %s", name, strings.Join(problems, "\n  "))
		})
	}
}

// metaFixtureYML is a valid action.yml; cases edit it.
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
// only hashes the sources, in a job that holds no secret; the cost history
// without a key reports the estimates alone, unreconciled with billing).
var metaModeOptional = map[string]string{"serverless": "runpod-api-key", "cost-history": "runpod-api-key"}

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
