package history

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/wire"
)

// Source is the evidence a pod's cost was read from. Better evidence wins:
// the cost artifact, then a cost log line, then the reaper's record of the
// pod it deleted, then an attempt log line, then an estimate from the log's
// timestamps; a pod only the gate marker shows has an unknown cost.
type Source string

// Sources, best first.
const (
	SourceArtifact    Source = "artifact"     // the cost artifact cleanup or the watchdog uploaded
	SourceCostLine    Source = "cost-line"    // a runpod-gpu::cost log line
	SourceReaper      Source = "reaper"       // the reaper's decision record: it deleted the pod
	SourceAttemptLine Source = "attempt-line" // a runpod-gpu::attempt log line: a rejected pod's paid seconds
	SourceLogWindow   Source = "log-window"   // an accepted pod's window estimated from log timestamps
	SourceGate        Source = "gate"         // only the paid gate's marker shows that a pod ran
)

// Decision says what an attempt did about the paid path.
type Decision string

// Decisions.
const (
	DecisionPaid    Decision = "paid"    // the paid path ran
	DecisionReused  Decision = "reused"  // an earlier gate for the tested ref was reused; no pod
	DecisionNone    Decision = "none"    // complete evidence shows no GPU work (not required, skipped, …)
	DecisionUnknown Decision = "unknown" // the evidence needed to tell is missing
)

// Pod is one pod an attempt paid for, with its cost from the best evidence.
type Pod struct {
	ID        string       `json:"podId"`
	GPU       string       `json:"gpu"`
	Candidate string       `json:"candidate"`
	Tier      string       `json:"tier"`
	Outcome   cost.Outcome `json:"outcome"`
	Reason    string       `json:"reason,omitempty"`
	Price     cost.Price   `json:"price"`
	Seconds   cost.Seconds `json:"seconds"`
	Dollars   cost.Money   `json:"dollars"`
	Source    Source       `json:"source"`
	Stages    []cost.Stage `json:"stages"`
	// Where the pod ran and what it showed about its host (the reputation's
	// evidence); empty when the evidence does not say (older records).
	Cloud      string           `json:"cloud,omitempty"`
	DataCenter string           `json:"dataCenter,omitempty"`
	Driver     string           `json:"driver,omitempty"`
	Machine    string           `json:"machine,omitempty"` // RunPod's machine id, from provision's attempt record
	Host       cost.HostVerdict `json:"host,omitempty"`
	At         time.Time        `json:"at,omitzero"` // when its attempt ended; zero when unknown
	// DuplicateOf names the attempt that already counted this pod id; the
	// pod is then left out of every total.
	DuplicateOf string   `json:"duplicateOf,omitempty"`
	Notes       []string `json:"notes"`
}

// Attempt is one workflow run attempt as its saved evidence shows it.
type Attempt struct {
	RunID      int64        `json:"runId"`
	Attempt    int          `json:"runAttempt"`
	Repository string       `json:"repository"`
	Event      string       `json:"event"`
	Trigger    cost.Trigger `json:"trigger"`
	TestedRef  string       `json:"testedRef"` // "" when no evidence names it
	PRNumber   int          `json:"prNumber"`
	CreatedAt  time.Time    `json:"createdAt"`
	StartedAt  time.Time    `json:"startedAt"`
	Status     string       `json:"status"`
	Conclusion string       `json:"conclusion"`
	URL        string       `json:"url"`
	Decision   Decision     `json:"decision"`
	// JobConclusion is how the GPU job ended, from the cost evidence; unknown
	// when no cost report says (one written before reports carried it, or none).
	JobConclusion cost.Conclusion `json:"jobConclusion"`
	Gate          gatecheck.Kind  `json:"gate"` // the kind of the last gate marker in the logs; "" when none
	// EvidenceComplete is false while a download is missing: the attempt's
	// GPU work and cost may then be partly or wholly unknown.
	EvidenceComplete bool  `json:"evidenceComplete"`
	Pods             []Pod `json:"pods"`
	// Serverless is the Serverless lane's spend, from its cost artifact; nil
	// for an attempt of the pod lane.
	Serverless *cost.ServerlessSpend `json:"serverless,omitempty"`
	Notes      []string              `json:"notes"`    // what is unknown, and why
	Warnings   []string              `json:"warnings"` // evidence that was odd: duplicates, malformed lines
	// GPUUsage is what the GPU job recorded of its GPU (usage.go); nil when it recorded nothing.
	GPUUsage *GPUUsage `json:"gpuUsage,omitempty"`
	// PodGPUUsage is each pod's recorded usage, by pod id, in a lane with a
	// GPU job per pod (matrix_tiers).
	PodGPUUsage map[string]GPUUsage `json:"gpuUsageByPod,omitempty"`
}

// Key returns the attempt's key.
func (a Attempt) Key() AttemptKey { return AttemptKey{RunID: a.RunID, Attempt: a.Attempt} }

// name is how reports refer to the attempt.
func (a Attempt) name() string { return fmt.Sprintf("run %d attempt %d", a.RunID, a.Attempt) }

// Spend sums the attempt's pods, leaving out duplicates.
func (a Attempt) Spend() Amount {
	var sum Amount
	for _, p := range a.Pods {
		if p.DuplicateOf == "" {
			sum.Add(p.Dollars)
		}
	}
	if a.Serverless != nil {
		sum.AddJob(a.Serverless.Dollars)
	}
	return sum
}

// readAttempt reads one attempt's saved evidence.
func readAttempt(st store, rec AttemptRecord, reaped reaperCosts) Attempt {
	a := Attempt{
		RunID: rec.RunID, Attempt: rec.Attempt, Repository: rec.Repository, Event: rec.Event,
		CreatedAt: rec.CreatedAt, StartedAt: rec.StartedAt, Status: rec.Status, Conclusion: rec.Conclusion,
		URL: rec.URL, Pods: []Pod{}, Notes: []string{}, Warnings: []string{},
	}
	if len(rec.PullRequests) > 0 {
		a.PRNumber = rec.PullRequests[0]
	}
	a.EvidenceComplete = rec.Final()

	jobs, jobsKnown := a.readJobs(st, rec)
	logs, logsRead := a.readLogs(st, rec, newJobTrust(jobs), jobsKnown)
	artifacts := a.readArtifacts(st, rec, jobs, jobsKnown, logs, logsRead)

	a.identify(rec, artifacts, logs)
	a.JobConclusion = jobConclusion(artifacts, logs.reports)
	a.Pods = mergePods(&a, artifacts, logs, reaped.of(a.Key()))
	a.Serverless = serverlessOf(artifacts)
	a.decide(logsRead, logs)
	a.readUsage(st, rec, logs)
	return a
}

// readJobs reads the attempt's job list: the lane's own jobs are the only
// ones whose log lines and cost artifacts are trusted. jobsKnown is false
// until they are listed.
func (a *Attempt) readJobs(st store, rec AttemptRecord) (jobs []JobInfo, jobsKnown bool) {
	// Only the lane's own jobs' evidence is read; until the jobs are known, none.
	if rec.Jobs.State != StateComplete {
		a.note("jobs not listed (%s): no log line or cost artifact is trusted until a collection lists them", describeDownload(rec.Jobs))
		return nil, false
	}
	data, err := st.readFile(rec.Key(), jobsFile)
	if err == nil {
		jobs, err = parseJobs(data)
	}
	if err != nil {
		a.note("jobs unreadable (%v): no log line or cost artifact is trusted, so its GPU work and cost are unknown", err)
		a.EvidenceComplete = false
		return nil, false
	}
	return jobs, true
}

// readLogs scans the attempt's logs for the trusted jobs' structured lines;
// logsRead is false when there were none to read or they were unreadable.
func (a *Attempt) readLogs(st store, rec AttemptRecord, trust jobTrust, jobsKnown bool) (logs logScan, logsRead bool) {
	switch {
	case rec.Logs.State == StateComplete && !jobsKnown:
		// Noted by readJobs: without the jobs, the logs say nothing trustworthy.
	case rec.Logs.State == StateComplete:
		data, err := st.readFile(rec.Key(), logsFile)
		if err == nil {
			logs, err = scanLogs(data, trust.trusts)
		}
		if err != nil {
			a.note("logs unreadable (%v): its GPU work and cost are unknown", err)
			a.EvidenceComplete = false
		} else {
			logsRead = true
		}
	default:
		a.note("logs not downloaded (%s): its GPU work and cost are unknown until a collection downloads them", describeDownload(rec.Logs))
	}
	for _, p := range logs.problems {
		a.warn("log: %s", p)
	}
	if logs.skipped > 0 {
		a.warn("log: %d more malformed structured lines", logs.skipped)
	}
	return logs, logsRead
}

// readArtifacts reads the attempt's downloaded cost artifacts that the
// lane's own jobs uploaded (laneArtifact) and sealed (a lane job's log
// carries the file's SHA-256, see cost.LineSeal), noting those missing and
// warning of those unreadable, not the lane's, or duplicated. An artifact
// records nothing of the job that uploaded it, and the GPU job's pull-request
// code can upload one under any name while a lane job runs beside it; only
// the seal, in a log that job cannot write, tells the lane's own. Artifacts
// are read in name and id order, so GitHub's listing order changes nothing.
func (a *Attempt) readArtifacts(st store, rec AttemptRecord, jobs []JobInfo, jobsKnown bool, logs logScan, logsRead bool) []cost.Artifact {
	var artifacts []cost.Artifact
	if rec.ArtifactList.State != StateComplete {
		a.note("cost artifacts not listed (%s): the cost artifact may be missing", describeDownload(rec.ArtifactList))
	}
	files := slices.Clone(rec.Artifacts)
	slices.SortStableFunc(files, func(x, y ArtifactFile) int {
		return cmp.Or(strings.Compare(x.Name, y.Name), cmp.Compare(x.ID, y.ID))
	})
	counted := map[string]string{} // seal → the artifact counted with it
	for _, f := range files {
		if isUsageArtifact(f.Name, rec.Key()) {
			continue // the GPU's usage, not a cost: readUsage
		}
		if f.State != StateComplete {
			a.note("cost artifact %s not downloaded (%s)", f.Name, describeDownload(f.Download))
			continue
		}
		if !jobsKnown {
			continue // readJobs noted it: nothing tells whose artifact this is
		}
		if why := laneArtifact(f, rec.Key(), jobs); why != "" {
			a.warn("cost artifact %s ignored: %s", f.Name, why)
			continue
		}
		data, err := st.readFile(rec.Key(), f.fileName())
		var art cost.Artifact
		var seal cost.Seal
		if err == nil {
			art, seal, err = readArtifact(data)
		}
		if err != nil {
			a.warn("cost artifact %s unreadable: %v", f.Name, err)
			continue
		}
		if !logsRead {
			a.note("cost artifact %s not counted: the lane's logs, which seal the artifacts it uploaded, are not read", f.Name)
			continue
		}
		if !logs.seals[seal.SHA256] {
			a.warn("cost artifact %s ignored as forged: no lane job's log seals its content (sha256 %s); "+
				"any job of the run can upload an artifact, the GPU job's pull-request code included", f.Name, seal.SHA256)
			continue
		}
		if first, dup := counted[seal.SHA256]; dup {
			a.warn("cost artifact %s ignored: a duplicate of %s", f.Name, first)
			continue
		}
		counted[seal.SHA256] = f.Name
		if art.Run.ID != rec.RunID || art.Run.Attempt != rec.Attempt {
			a.warn("cost artifact %s names run %d attempt %d: counted here, where it was uploaded", f.Name, art.Run.ID, art.Run.Attempt)
		}
		artifacts = append(artifacts, art)
	}
	return artifacts
}

// identify sets the trigger and tested ref: the cost artifact says them; else
// the event and the gate marker do.
func (a *Attempt) identify(rec AttemptRecord, artifacts []cost.Artifact, logs logScan) {
	a.Trigger = cost.TriggerOf(rec.Event)
	if len(logs.gates) > 0 {
		last := logs.gates[len(logs.gates)-1]
		a.TestedRef, a.Gate = last.TestedRef, last.Kind
	}
	if len(artifacts) == 0 {
		return
	}
	run := artifacts[0].Run // the first artifact speaks for the attempt
	a.Trigger = run.Trigger
	if run.TestedRef != "" {
		a.TestedRef = run.TestedRef
	}
	if run.PRNumber > 0 {
		a.PRNumber = run.PRNumber
	}
}

// jobConclusion is how the attempt's GPU job ended: the first cost report
// that knows it, artifacts first. The watchdog may report while the job still
// runs (unknown) and cleanup after it ended, so a known conclusion wins over
// an unknown one whichever came first.
func jobConclusion(artifacts []cost.Artifact, reports []cost.Report) cost.Conclusion {
	for _, a := range artifacts {
		if c := a.Report.Conclusion(); c != cost.ConclusionUnknown {
			return c
		}
	}
	for _, r := range reports {
		if c := r.Conclusion(); c != cost.ConclusionUnknown {
			return c
		}
	}
	return cost.ConclusionUnknown
}

// decide classifies the attempt from its pods and gate marker.
func (a *Attempt) decide(logsRead bool, logs logScan) {
	gpuWork := len(a.Pods) > 0 || len(logs.attempts) > 0 || len(logs.reports) > 0 || a.Serverless != nil
	switch {
	case gpuWork:
		a.Decision = DecisionPaid
	case a.Gate == gatecheck.KindReused:
		a.Decision = DecisionReused
	case a.Gate == gatecheck.KindPaid:
		// A pod ran the tests, but nothing else shows it: it is counted,
		// with its GPU and cost unknown, rather than left out as free.
		a.Decision = DecisionPaid
		a.Pods = append(a.Pods, Pod{Outcome: cost.OutcomeAccepted, Source: SourceGate, Stages: []cost.Stage{},
			Notes: []string{"the gate says a pod ran the tests, but no pod evidence was found: its GPU and cost are unknown"}})
	case !logsRead:
		a.Decision = DecisionUnknown
	default:
		a.Decision = DecisionNone
	}
	if a.Decision == DecisionPaid && !logsRead {
		a.note("without logs, rejected candidates missing from the cost artifact are unknown")
	}
}

func (a *Attempt) note(format string, args ...any) {
	a.Notes = append(a.Notes, fmt.Sprintf(format, args...))
}

func (a *Attempt) warn(format string, args ...any) {
	a.Warnings = append(a.Warnings, fmt.Sprintf(format, args...))
}

func describeDownload(d Download) string {
	if d.State == "" {
		return "not collected yet"
	}
	if d.Error == "" {
		return string(d.State)
	}
	return string(d.State) + ": " + d.Error
}

// mergePods combines an attempt's evidence into one row per pod. Evidence
// is taken best source first; a pod seen again from a worse source only
// fills in what the better one lacks (the candidate name, say). The same pod
// twice from one source is a duplicate (a duplicated log line, or cleanup and
// the watchdog both reporting): counted once, with a warning.
func mergePods(a *Attempt, artifacts []cost.Artifact, logs logScan, reaped []cost.Report) []Pod {
	var evidence []Pod
	for _, art := range artifacts {
		for _, r := range art.Reports() {
			evidence = append(evidence, reportPods(r, SourceArtifact)...)
		}
	}
	for _, r := range logs.reports {
		evidence = append(evidence, reportPods(r, SourceCostLine)...)
	}
	for _, r := range reaped {
		// Only the pod the reaper deleted: its report carries no stages or rejected candidates.
		evidence = append(evidence, reportPods(cost.Report{PodID: r.PodID, GPU: r.GPU, Price: r.Price, Window: r.Window}, SourceReaper)...)
	}
	for _, l := range logs.attempts {
		if l.PodID != "" { // without a pod nothing was paid
			evidence = append(evidence, attemptPod(l, logs.last))
		}
	}

	pods := []Pod{}
	index := map[string]int{}
	seen := map[string]int{} // pod key and source → times seen
	for _, p := range evidence {
		key := p.ID
		if key == "" {
			// An accepted pod reported without an id cannot be matched.
			key = fmt.Sprintf("#%d", len(pods))
		}
		if seen[key+" "+string(p.Source)]++; seen[key+" "+string(p.Source)] == 2 {
			a.warn("pod %s appears more than once as %s evidence (a duplicated log line, or both watchdog and cleanup reporting): counted once", p.ID, p.Source)
		}
		i, known := index[key]
		switch {
		case !known:
			index[key] = len(pods)
			pods = append(pods, p)
		case pods[i].Source == p.Source && !pods[i].Dollars.Known && p.Dollars.Known:
			pods[i] = p // of two reports of one pod, the one with a known cost
		default:
			pods[i] = fillIdentity(pods[i], p)
		}
	}
	return pods
}

// reportPods turns a cost report into pod evidence: the accepted pod and
// each rejected candidate.
func reportPods(r cost.Report, src Source) []Pod {
	var pods []Pod
	if r.PodID != "" || r.Window.Start.Known() || r.Window.End.Known() {
		p := Pod{ID: r.PodID, GPU: r.GPU, Tier: r.Tier, Outcome: cost.OutcomeAccepted, Price: r.Price,
			// Its proof passed; a pod lost to its host while its job ran says so.
			Cloud: r.Cloud, DataCenter: r.DataCenter, Driver: r.Driver, Host: cmp.Or(r.Host, cost.HostWorked),
			Seconds: r.Window.Seconds(), Dollars: r.Dollars(), Source: src, Stages: append([]cost.Stage{}, r.Stages...), Notes: []string{}}
		if !r.Window.Start.Known() {
			p.Notes = append(p.Notes, "paid window start unknown (createdAt is never used for cost)")
		}
		if !r.Window.End.Known() {
			p.Notes = append(p.Notes, "deletion not confirmed: the paid window has no end and the pod may have kept billing")
		}
		if !r.Price.Known {
			p.Notes = append(p.Notes, fmt.Sprintf("hourly price unknown (%s)", r.Price.Source))
		}
		pods = append(pods, p)
	}
	for _, att := range r.Rejected {
		if att.PodID == "" {
			continue
		}
		pods = append(pods, attemptPodOf(att, src))
	}
	return pods
}

// attemptPod is a pod known from its attempt line. A rejected pod's line
// holds its paid seconds; an accepted pod's holds only its startup seconds,
// so its window is estimated from the log: the line's time less the startup
// seconds, to the attempt's last log line.
func attemptPod(l loggedAttempt, lastLog wire.Time) Pod {
	p := attemptPodOf(l.Attempt, SourceAttemptLine)
	if l.Outcome != cost.OutcomeAccepted {
		return p
	}
	p.Seconds, p.Dollars = cost.Seconds{}, cost.Money{}
	at, okAt := l.at.Get()
	last, okLast := lastLog.Get()
	if !okAt || !okLast || !l.Seconds.Known {
		p.Notes = append(p.Notes, "no cost report, and the log has no timestamps to estimate the paid window from: cost unknown")
		return p
	}
	start := at.Add(-time.Duration(l.Seconds.N) * time.Second)
	window := cost.Window{Start: wire.KnownTime(start), End: wire.KnownTime(later(last, at))}
	p.Source, p.Seconds, p.Dollars = SourceLogWindow, window.Seconds(), cost.Dollars(window, p.Price)
	p.Notes = append(p.Notes, "no cost report: the paid window is estimated from log timestamps "+
		"(accepted-attempt line less its startup seconds, to the attempt's last log line); deletion is not evidenced, so it may have cost more")
	return p
}

func attemptPodOf(att cost.Attempt, src Source) Pod {
	p := Pod{ID: att.PodID, GPU: att.GPU, Candidate: att.Candidate, Outcome: att.Outcome, Reason: att.Reason,
		Price: att.Price, Seconds: att.Seconds, Dollars: att.Dollars(), Source: src, Stages: []cost.Stage{}, Notes: []string{},
		Cloud: att.Cloud, DataCenter: att.DataCenter, Driver: att.Driver, Machine: att.Machine, Host: att.Host, At: att.At}
	if !p.Dollars.Known {
		p.Notes = append(p.Notes, fmt.Sprintf("cost unknown (paid seconds %s, price %s)", att.Seconds, att.Price))
	}
	return p
}

// fillIdentity completes a pod's names from worse evidence of the same pod.
func fillIdentity(p, other Pod) Pod {
	for _, f := range []struct{ dst, src *string }{
		{&p.GPU, &other.GPU}, {&p.Candidate, &other.Candidate}, {&p.Tier, &other.Tier}, {&p.Reason, &other.Reason},
		{&p.Cloud, &other.Cloud}, {&p.DataCenter, &other.DataCenter}, {&p.Driver, &other.Driver}, {&p.Machine, &other.Machine},
		{(*string)(&p.Host), (*string)(&other.Host)},
	} {
		if *f.dst == "" {
			*f.dst = *f.src
		}
	}
	if p.At.IsZero() {
		p.At = other.At
	}
	return p
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
