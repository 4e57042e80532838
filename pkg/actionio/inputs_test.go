package actionio

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// Connection is a group of inputs several actions embed.
type Connection struct {
	Token string `input:"github-token,secret" default:"${{ github.token }}" desc:"Token, used when app-id is empty."`
	AppID int64  `input:"app-id" default:"" desc:"GitHub App id."`
}

// color is a TextUnmarshaler input type.
type color string

func (c *color) UnmarshalText(b []byte) error {
	if s := string(b); s != "red" && s != "blue" {
		return errors.New("red or blue")
	}
	*c = color(b)
	return nil
}

type exampleInputs struct {
	Connection `desc.github-token:"Token that publishes the gate."`
	PRNumber   int64         `input:"pr-number" default:"0" min:"0" max:"100" desc:"Pull request."`
	Head       CommitSHA     `input:"head-sha" default:"" desc:"Head."`
	Poll       time.Duration `input:"poll-seconds" default:"30" min:"1" max:"60" desc:"Poll."`
	Color      color         `input:"color" default:"" want:"a colour: red or blue" desc:"Colour."`
	Paths      []string      `input:"paths" default:"" desc:"Paths."`
	Key        string        `input:"runpod-api-key,required,secret" desc:"Key."`
}

// Validate requires head-sha with a pull request, a rule between inputs.
func (in *exampleInputs) Validate() error {
	if in.PRNumber > 0 {
		return RequireSHA("head-sha", in.Head)
	}
	return nil
}

func TestInputSpecsFollowTheDeclaration(t *testing.T) {
	specs, err := InputSpecs(reflect.TypeFor[exampleInputs]())
	assert.NilError(t, err)
	assert.DeepEqual(t, specs, []InputSpec{
		{Name: "github-token", Description: "Token that publishes the gate.", Default: "${{ github.token }}", Secret: true},
		{Name: "app-id", Description: "GitHub App id."},
		{Name: "pr-number", Description: "Pull request.", Default: "0"},
		{Name: "head-sha", Description: "Head."},
		{Name: "poll-seconds", Description: "Poll.", Default: "30"},
		{Name: "color", Description: "Colour."},
		{Name: "paths", Description: "Paths."},
		{Name: "runpod-api-key", Description: "Key.", Required: true, Secret: true},
	})
}

func TestInputSpecsRefuseIllFormedDeclarations(t *testing.T) {
	tests := []struct {
		name    string
		typ     reflect.Type
		wantErr string
	}{
		{"not a struct", reflect.TypeFor[int](), "inputs: int is not a struct"},
		{"no name", reflect.TypeFor[struct {
			A string `input:",required"`
		}](), `names no input`},
		{"unknown option", reflect.TypeFor[struct {
			A string `input:"a,optional"`
		}](), `option "optional": want required or secret`},
		{"twice", reflect.TypeFor[struct {
			A string `input:"a"`
			B string `input:"a"`
		}](), `input "a" is declared twice`},
		{"twice through a group", reflect.TypeFor[struct {
			Connection
			C string `input:"app-id"`
		}](), `input "app-id" is declared twice`},
		{"a bound that is no number", reflect.TypeFor[struct {
			A int64 `input:"a" max:"ten"`
		}](), `max:"ten" is not an integer`},
		{"an unsupported type", reflect.TypeFor[struct {
			A float64 `input:"a"`
		}](), "type float64: want string, bool, int64"},
		{"a path that is no string", reflect.TypeFor[struct {
			A bool `input:"a" path:"GITHUB_WORKSPACE"`
		}](), "a path input must be a string"},
		{"an unknown form", reflect.TypeFor[struct {
			A string `input:"a" form:"colour"`
		}](), `form:"colour": want an inputform kind on a string input`},
		{"a form on a number", reflect.TypeFor[struct {
			A int64 `input:"a" form:"price"`
		}](), `form:"price": want an inputform kind on a string input`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := InputSpecs(tc.typ)
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestReadInputsReadsEveryKind(t *testing.T) {
	r := newRunner(t, map[string]string{
		"pr-number": "7", "head-sha": strings.Repeat("ab", 20), "color": "blue", "paths": "a\n b\n\n", "runpod-api-key": "rpa_KEY",
	})
	in, err := ReadInputs[exampleInputs](r.io)
	assert.NilError(t, err)
	assert.DeepEqual(t, in, exampleInputs{PRNumber: 7, Head: CommitSHA(strings.Repeat("ab", 20)), Poll: 30 * time.Second,
		Color: "blue", Paths: []string{"a", "b"}, Key: "rpa_KEY"})
	// A ${{ }} default is the runner's to fill: read without the runner, the input stays empty.
	assert.Check(t, is.Equal(in.Token, ""))
	r.io.Infof("key %s", in.Key)
	assert.Check(t, is.Contains(r.stdout.String(), "::add-mask::rpa_KEY"))
	assert.Check(t, is.Contains(r.stdout.String(), "key ***"))
}

func TestReadInputsNamesEveryProblemAtOnce(t *testing.T) {
	r := newRunner(t, map[string]string{"pr-number": "101", "color": "green", "poll-seconds": "0"})
	_, err := ReadInputs[exampleInputs](r.io)
	for _, want := range []string{
		`input pr-number = "101": want an integer from 0 to 100`,
		`input color = "green": want a colour: red or blue`,
		`input poll-seconds = "0": want an integer from 1 to 60`,
		"input runpod-api-key: a value (the input is required)",
	} {
		assert.Check(t, is.ErrorContains(err, want))
	}
	var ie *InputError
	assert.Check(t, errors.As(err, &ie), "callers can inspect which input failed")
}

func TestReadInputsValidatesRulesBetweenInputs(t *testing.T) {
	r := newRunner(t, map[string]string{"pr-number": "7", "runpod-api-key": "k"})
	_, err := ReadInputs[exampleInputs](r.io)
	assert.ErrorContains(t, err, "input head-sha: a full commit SHA (40 lower-case hex digits, or 64 in a SHA-256 repository) (the input is required)")
}

func TestReadInputsWarnsForLenientInputs(t *testing.T) {
	type report struct {
		PRNumber int64     `input:"pr-number" default:"0" max:"10" lenient:"the report records no pull request"`
		Tested   CommitSHA `input:"tested-ref" lenient:"the report records no tested ref"`
	}
	r := newRunner(t, map[string]string{"pr-number": "x", "tested-ref": "main"})
	in, err := ReadInputs[report](r.io)
	assert.NilError(t, err)
	assert.DeepEqual(t, in, report{})
	assert.Check(t, is.Contains(r.stdout.String(), `::warning::input pr-number = "x": want an integer from 0 to 10; the report records no pull request`))
	assert.Check(t, is.Contains(r.stdout.String(), `::warning::input tested-ref = "main": want `+SHAForm+"; the report records no tested ref"))
}

// A form:"…" input is checked where it is read: the error names the input,
// the value (quoted: a newline cannot start a workflow command) and the form;
// a lenient one warns and reads as not given.
func TestReadInputsChecksForms(t *testing.T) {
	type display struct {
		Tier  string `input:"tier" form:"tier" default:""`
		Price string `input:"price-per-hour" form:"price" default:""`
		Label string `input:"label" form:"label" default:"gpu-approved"`
		GPU   string `input:"gpu-type" form:"gpu-type" default:"" lenient:"the report shows no GPU type"`
	}
	r := newRunner(t, map[string]string{"tier": "ampere\n::warning::x", "price-per-hour": "1e308", "gpu-type": "<b>x</b>"})
	_, err := ReadInputs[display](r.io)
	assert.Check(t, is.ErrorContains(err, `input tier = "ampere\n::warning::x": want a tier name of 1-32`))
	assert.Check(t, is.ErrorContains(err, `input price-per-hour = "1e308": want a positive number of USD per hour up to 1000`))
	assert.Check(t, !strings.Contains(err.Error(), "input label"), "the default is a label")
	assert.Check(t, is.Contains(r.stdout.String(), `::warning::input gpu-type = "<b>x</b>": want an exact RunPod GPU id`))

	r = newRunner(t, map[string]string{"tier": "ampere", "price-per-hour": "0.25", "gpu-type": "NVIDIA L4"})
	in, err := ReadInputs[display](r.io)
	assert.NilError(t, err)
	assert.DeepEqual(t, in, display{Tier: "ampere", Price: "0.25", Label: "gpu-approved", GPU: "NVIDIA L4"})
}

func TestReadInputsConfinesPaths(t *testing.T) {
	ws := t.TempDir()
	real, err := filepath.EvalSymlinks(ws)
	assert.NilError(t, err)
	assert.NilError(t, os.Symlink("/etc/passwd", filepath.Join(ws, "passwd")))
	type paths struct {
		Record string `input:"record-path" default:"record.json" path:"GITHUB_WORKSPACE"`
	}
	r := newRunner(t, nil)
	r.env[RootWorkspace] = ws
	in, err := ReadInputs[paths](r.io)
	assert.NilError(t, err)
	assert.Equal(t, in.Record, filepath.Join(real, "record.json"))

	r.env["INPUT_RECORD-PATH"] = "passwd"
	_, err = ReadInputs[paths](r.io)
	assert.ErrorContains(t, err, `input record-path = "passwd": want a path inside GITHUB_WORKSPACE`)
}
