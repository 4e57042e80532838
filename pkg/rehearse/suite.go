package rehearse

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"

	"gopkg.in/yaml.v3"

	runpodgpu "github.com/org/runpod-gpu"
	"github.com/org/runpod-gpu/pkg/workflowplay"
)

// suiteWorkflow is one of the suite's reusable workflows as this program
// carries it: what the player plays, and the names a caller must use.
type suiteWorkflow struct {
	WF      *workflowplay.Workflow
	Inputs  []string
	Secrets []string
	secret  map[string]bool // required by name
}

func (s *suiteWorkflow) requiredSecrets() []string {
	var out []string
	for _, n := range s.Secrets {
		if s.secret[n] {
			out = append(out, n)
		}
	}
	return out
}

// loadSuite reads the lane's reusable workflows embedded in this program
// (runpodgpu.Workflows), by file name.
func loadSuite(files fs.FS) (map[string]*suiteWorkflow, error) {
	names, err := fs.Glob(files, ".github/workflows/*.yml")
	if err != nil {
		return nil, err
	}
	out := map[string]*suiteWorkflow{}
	for _, name := range names {
		data, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, err
		}
		sw, err := parseSuiteWorkflow(string(data))
		if err != nil {
			return nil, fmt.Errorf("the suite's %s: %w", name, err)
		}
		out[path.Base(name)] = sw
	}
	return out, nil
}

func parseSuiteWorkflow(text string) (*suiteWorkflow, error) {
	wf, err := workflowplay.ParseWorkflow(text)
	if err != nil {
		return nil, err
	}
	var doc struct {
		On struct {
			WorkflowCall struct {
				Secrets map[string]struct {
					Required bool `yaml:"required"`
				} `yaml:"secrets"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	sw := &suiteWorkflow{WF: wf, secret: map[string]bool{}}
	if wf.On.WorkflowCall != nil {
		sw.Inputs = slices.Sorted(maps.Keys(wf.On.WorkflowCall.Inputs))
	}
	for name, s := range doc.On.WorkflowCall.Secrets {
		sw.Secrets = append(sw.Secrets, name)
		sw.secret[name] = s.Required
	}
	slices.Sort(sw.Secrets)
	return sw, nil
}

// embeddedSuite is the suite this program was built with.
func embeddedSuite() (map[string]*suiteWorkflow, error) { return loadSuite(runpodgpu.Workflows) }
