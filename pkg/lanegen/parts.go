package lanegen

import (
	"embed"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/org/runpod-gpu/pkg/lazyre"
	"gopkg.in/yaml.v3"
)

// partTemplates are the parts' headers, above their jobs: text/template
// files with [[ ]] delimiters (the workflows use {{ }}), one per part named
// <part>.tmpl, and about.tmpl, the comment they share.
//
//go:embed parts/*.tmpl
var partTemplates embed.FS

// part is one own-job part of the lane and the lane's jobs it runs.
type part struct {
	file string
	jobs []partJob
}

// partJob is one of the lane's jobs as a part runs it.
type partJob struct {
	from   string
	rerun  bool     // from its host-fault re-run job, which reads the lane so far
	wiring []string // its job-level needs and if in the part (its caller orders the parts)
}

// parts are the lane's own-job parts. Provision runs the lane's first
// provisioning and a host-fault re-run alike, so it is provision-again, which
// reads the lane so far (the first provisioning's lane holds none).
var parts = []part{
	{file: "gpu-lane-authorize.yml", jobs: []partJob{{from: "authorize"}, {from: "reputation"}}},
	{file: "gpu-lane-provision.yml", jobs: []partJob{{from: "provision", rerun: true,
		wiring: []string{"    if: ${{ fromJSON(inputs.lane).authorize.outputs.decision == 'run' }}"}}}},
	{file: "gpu-lane-watchdog.yml", jobs: []partJob{{from: "watchdog"}}},
	{file: "gpu-lane-finish.yml", jobs: []partJob{
		{from: "gate", wiring: []string{"    needs: cleanup", "    if: always()"}},
		{from: "cleanup", wiring: []string{"    if: ${{ inputs.provision-result != 'skipped' }}"}},
	}},
}

// generate returns the part's text: its header from its template, then the
// lane's jobs as the part runs them.
func (p part) generate(l *lane) (string, error) {
	header, err := p.header(l)
	if err != nil {
		return "", err
	}
	at := slices.Index(header, "jobs:")
	if at != len(header)-1 {
		return "", fmt.Errorf("pkg/lanegen/parts/%s.tmpl: want its last line jobs:, the part's jobs follow it", p.file)
	}
	own, err := ownInputs(header)
	if err != nil {
		return "", err
	}
	out := header
	for i, pj := range p.jobs {
		j, err := pj.job(l, own, p.ownJobs())
		if err != nil {
			return "", fmt.Errorf("job %s: %w", pj.from, err)
		}
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, j.lines()...)
	}
	return joinLines(out), nil
}

// header writes the part's header from its template: laneInput, laneSecret
// and laneOutput copy one of gpu-lane.yml's settings as it is written there.
func (p part) header(l *lane) ([]string, error) {
	copyOf := func(section string) func(string) (string, error) {
		return func(name string) (string, error) {
			block, ok := l.settings[section][name]
			if !ok {
				return "", fmt.Errorf("gpu-lane.yml has no %s %s", strings.TrimSuffix(section, "s"), name)
			}
			return strings.Join(block, "\n"), nil
		}
	}
	funcs := template.FuncMap{"laneInput": copyOf("inputs"), "laneSecret": copyOf("secrets"), "laneOutput": copyOf("outputs")}
	tmpl, err := template.New(p.file).Delims("[[", "]]").Funcs(funcs).Option("missingkey=error").
		ParseFS(partTemplates, "parts/about.tmpl", "parts/"+p.file+".tmpl")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := tmpl.ExecuteTemplate(&b, p.file+".tmpl", nil); err != nil {
		return nil, err
	}
	return lines(b.String()), nil
}

// ownJobs are the ids of the part's jobs as the lane names them: a re-run
// job's needs.<first job> is the lane so far, not the part's own job.
func (p part) ownJobs() []string {
	var ids []string
	for _, pj := range p.jobs {
		id := pj.from
		if pj.rerun {
			id = rerunOf(pj.from).id
		}
		ids = append(ids, id)
	}
	return ids
}

// job writes the lane's job as the part runs it: its lead comment and name's
// comment dropped, its needs and if the part's, and every value the lane's
// other jobs or inputs give read from the lane record instead.
func (pj partJob) job(l *lane, own, ownJobs []string) (job, error) {
	j, err := l.job(pj.from)
	if err != nil {
		return j, err
	}
	if pj.rerun {
		if j, err = rerunOf(pj.from).apply(j); err != nil {
			return j, err
		}
		j.id = pj.from
	}
	if j, err = j.withLead(nil).withName(""); err != nil {
		return j, err
	}
	j = j.withWiring(pj.wiring)
	body := make([]string, len(j.body))
	for i, s := range j.body {
		if body[i], err = fromLane(s, own, ownJobs); err != nil {
			return j, fmt.Errorf("line %q: %w", strings.TrimSpace(s), err)
		}
	}
	j.body = body
	return j, nil
}

// rerunOf is the re-run job of the lane's job id.
func rerunOf(id string) rerun {
	for _, r := range reruns {
		if r.from == id {
			return r
		}
	}
	return rerun{from: id, id: id}
}

// ownInputs are the inputs the part's header declares.
func ownInputs(header []string) ([]string, error) {
	var doc struct {
		On struct {
			WorkflowCall struct {
				Inputs map[string]any `yaml:"inputs"`
			} `yaml:"workflow_call"`
		} `yaml:"on"`
	}
	if err := yaml.Unmarshal([]byte(joinLines(header)), &doc); err != nil {
		return nil, fmt.Errorf("the header does not parse: %w", err)
	}
	var names []string
	for name := range doc.On.WorkflowCall.Inputs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

var (
	// latestRE is how the lane reads the last of a job and its re-run: the
	// one a part's lane record holds under the first job's key.
	latestRE = lazyre.Regexp{Pattern: `needs\.([a-z-]+)-again\.outputs\.([a-z-]+) \|\| needs\.([a-z-]+)\.outputs\.([a-z-]+)`}
	// settingRE is a with: input the lane gives as a literal because it
	// writes the GPU job itself; a part's caller names its own.
	settingRE = lazyre.Regexp{Pattern: `^(\s+)(gpu-job-name|test-step-name): [^$].*$`}
	// inputRE is one of the workflow's inputs (not the lane record's).
	inputRE = lazyre.Regexp{Pattern: `(^|[^\w.-])inputs\.([a-z][a-z0-9-]*)`}
	// needsRE is a job's output or result.
	needsRE = lazyre.Regexp{Pattern: `needs\.([a-z][a-z0-9-]*)\.(outputs\.|result)`}
)

// gpuJobResults are the part inputs that carry the lane's GPU jobs' results.
var gpuJobResults = map[string]string{"gpu-tests": "inputs.gpu-job-result", "gpu-tests-again": "inputs.rerun-gpu-job-result"}

// fromLane rewrites one line of the lane's job for a part with the inputs own
// and the jobs ownJobs: what the lane reads from its other jobs and its
// inputs, the part reads from the lane record (inputs.lane), and the GPU
// jobs' results from its inputs.
func fromLane(s string, own, ownJobs []string) (string, error) {
	var err error
	s = latestRE.Compiled().ReplaceAllStringFunc(s, func(m string) string {
		g := latestRE.FindStringSubmatch(m)
		if g[1] != g[3] || g[2] != g[4] {
			err = fmt.Errorf("%q reads two jobs that are not a job and its re-run", m)
			return m
		}
		return "needs." + g[1] + ".outputs." + g[2]
	})
	s = settingRE.ReplaceAllString(s, "${1}${2}: $${{ inputs.${2} }}")
	s = inputRE.Compiled().ReplaceAllStringFunc(s, func(m string) string {
		g := inputRE.FindStringSubmatch(m)
		if slices.Contains(own, g[2]) {
			return m
		}
		return g[1] + "fromJSON(inputs.lane).inputs." + g[2]
	})
	s = needsRE.Compiled().ReplaceAllStringFunc(s, func(m string) string {
		g := needsRE.FindStringSubmatch(m)
		switch {
		case slices.Contains(ownJobs, g[1]):
			return m
		case g[2] == "outputs.":
			return "fromJSON(inputs.lane)." + g[1] + ".outputs."
		case gpuJobResults[g[1]] != "" && slices.Contains(own, strings.TrimPrefix(gpuJobResults[g[1]], "inputs.")):
			return gpuJobResults[g[1]]
		}
		err = fmt.Errorf("%s is not a job of the part, and a part's lane record holds no job's result (only the GPU jobs' results come in, as inputs)", m)
		return m
	})
	return s, err
}
