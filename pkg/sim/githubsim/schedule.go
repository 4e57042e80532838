package githubsim

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// assignJobs hands queued jobs, oldest first, to online idle runners that carry all their
// labels, as GitHub's label matching does; a JIT runner is not bound to any particular job.
func (s *Server) assignJobs(now time.Time) {
	s.waiting = slices.DeleteFunc(s.waiting, func(j *job) bool { return j.Status != "queued" })
	slices.SortFunc(s.waiting, func(a, b *job) int { return cmp.Compare(a.ID, b.ID) })
	for _, j := range slices.Clone(s.waiting) {
		if r := s.idleRunnerFor(j.attempt.run.repo, j.Labels); r != nil {
			s.start(j, r, now)
		}
	}
	s.waiting = slices.DeleteFunc(s.waiting, func(j *job) bool { return j.Status != "queued" })
}

func (s *Server) idleRunnerFor(rp *repo, labels []string) *runner {
	for _, r := range s.runners {
		inScope := strings.EqualFold(r.Repo, rp.FullName()) || (r.Org != "" && strings.EqualFold(r.Org, rp.Owner))
		if !r.Online || r.Busy || !inScope {
			continue
		}
		if !slices.ContainsFunc(labels, func(l string) bool {
			return !slices.ContainsFunc(r.Labels, func(rl string) bool { return strings.EqualFold(rl, l) })
		}) {
			return r
		}
	}
	return nil
}

// start runs job j on runner r from now: its steps follow the plan on the clock.
func (s *Server) start(j *job, r *runner, now time.Time) {
	r.Busy, r.JobID = true, j.ID
	j.Status, j.StartedAt = "in_progress", now
	j.RunnerID, j.RunnerName = r.ID, r.Name
	if j.external { // its steps are reported as they really run (external.go)
		s.settleAttempt(j.attempt, now)
		return
	}
	j.scripted = true
	s.running = append(s.running, j)
	at := now
	for i := range j.plan {
		j.plan[i].start, j.plan[i].end = at, at.Add(j.plan[i].duration)
		at = j.plan[i].end
	}
	s.progress(j, now)
	s.settleAttempt(j.attempt, now)
}

// advance brings every clock-driven object up to now. It is called before every answer, so
// state depends on the clock alone and never on how often anyone polls.
func (s *Server) advance(now time.Time) {
	s.reapOfflineRunners(now)
	s.failLostJobs(now)
	for _, j := range slices.Clone(s.running) {
		if j.scripted && j.Status == "in_progress" {
			s.progress(j, now)
		}
	}
	s.running = slices.DeleteFunc(s.running, func(j *job) bool { return !j.scripted || j.Status != "in_progress" })
}

// progress moves a running scripted job's steps to now. A failing step skips the rest; when
// the last step ends the job completes at that instant and its ephemeral runner leaves.
func (s *Server) progress(j *job, now time.Time) {
	failedAt := time.Time{}
	for i, p := range j.plan {
		st := &j.Steps[i]
		switch {
		case !failedAt.IsZero():
			st.Status, st.Conclusion, st.StartedAt, st.CompletedAt = "completed", "skipped", failedAt, failedAt
		case !now.Before(p.end):
			st.Status, st.Conclusion, st.StartedAt, st.CompletedAt = "completed", p.conclusion, p.start, p.end
			if slices.Contains(failingEnds, p.conclusion) {
				failedAt = p.end
			}
		case !now.Before(p.start):
			st.Status, st.StartedAt = "in_progress", p.start
			return
		default:
			return
		}
	}
	end := j.StartedAt
	if n := len(j.plan); n > 0 {
		end = cmp.Or(failedAt, j.plan[n-1].end)
	}
	conclusion := "success"
	if !failedAt.IsZero() {
		conclusion = "failure"
	}
	j.Status, j.Conclusion, j.CompletedAt, j.scripted = "completed", conclusion, end, false
	s.releaseRunner(j)
	s.settleAttempt(j.attempt, end)
}

// finish ends a job early at `at`: the running step gets stepConclusion, later ones are skipped.
func (s *Server) finish(j *job, at time.Time, conclusion, stepConclusion string) {
	for i := range j.Steps {
		st := &j.Steps[i]
		switch st.Status {
		case "completed":
		case "in_progress":
			st.Status, st.Conclusion, st.CompletedAt = "completed", stepConclusion, at
		default:
			st.Status, st.Conclusion, st.StartedAt, st.CompletedAt = "completed", "skipped", at, at
		}
	}
	j.Status, j.Conclusion, j.CompletedAt, j.scripted = "completed", conclusion, at, false
	if j.StartedAt.IsZero() {
		j.StartedAt = at
	}
	s.releaseRunner(j)
	s.settleAttempt(j.attempt, at)
}

// releaseRunner removes the ephemeral runner that ran j: a JIT runner takes one job.
func (s *Server) releaseRunner(j *job) {
	for _, r := range s.runners {
		if r.ID == j.RunnerID && r.JobID == j.ID {
			s.removeRunner(r)
			return
		}
	}
}

// settleAttempt derives an unpinned attempt's state from its jobs.
func (s *Server) settleAttempt(a *attempt, at time.Time) {
	a.updatedAt = maxTime(a.updatedAt, at)
	if a.pinned || len(a.jobs) == 0 {
		return
	}
	completed, started := 0, false
	conclusion := "success"
	for _, j := range a.jobs {
		switch j.Status {
		case "completed":
			completed++
			switch {
			case slices.Contains(failingEnds, j.Conclusion):
				conclusion = "failure"
			case j.Conclusion == "cancelled" && conclusion == "success":
				conclusion = "cancelled"
			}
		case "in_progress":
			started = true
		}
	}
	switch {
	case completed == len(a.jobs):
		a.status, a.conclusion = "completed", conclusion
	case started || completed > 0:
		a.status, a.conclusion = "in_progress", ""
	default:
		a.status, a.conclusion = "queued", ""
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
