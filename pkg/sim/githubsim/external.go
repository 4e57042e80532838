package githubsim

import (
	"slices"
	"time"
)

// RunnerLostTimeout is how long GitHub keeps the job of a runner that stopped talking to it
// in progress: the runner renews its job's lock every minute and the lock lasts ten, so the
// job fails about ten minutes after the runner was lost, with "The self-hosted runner: …
// lost communication with the server" (actions/runner issues 1546, 3539).
const RunnerLostTimeout = 10 * time.Minute

// WithRunnerLostTimeout shortens RunnerLostTimeout, for simulations on the real clock.
func WithRunnerLostTimeout(d time.Duration) Option { return func(s *Server) { s.runnerLost = d } }

// loseRunner records that job j's runner went offline at now; the scripted steps stop
// where they are (nothing runs them any more) and failLostJobs ends the job later.
func (s *Server) loseRunner(j *job, now time.Time) {
	j.RunnerLostAt, j.scripted = now, false
	s.lostJobs = append(s.lostJobs, j)
}

// failLostJobs fails every job whose runner was lost longer ago than the lock lasts.
func (s *Server) failLostJobs(now time.Time) {
	s.lostJobs = slices.DeleteFunc(s.lostJobs, func(j *job) bool {
		if j.Status != "in_progress" {
			return true // cancelled meanwhile
		}
		expiry := j.RunnerLostAt.Add(s.runnerLost)
		if now.Before(expiry) {
			return false
		}
		s.finish(j, expiry, "failure", "failure")
		return true
	})
}

// externalJob is an external job that a runner took and that is still in progress: the
// only state in which its steps can be reported.
func (s *Server) externalJob(fullName string, jobID int64, number int) (*job, error) {
	s.advance(s.clock.Now())
	j, err := s.jobByName(fullName, jobID)
	if err != nil {
		return nil, err
	}
	switch {
	case !j.external:
		return nil, invalid("job %d runs its steps on the clock: only an External job's steps are reported", jobID)
	case j.Status != "in_progress":
		return nil, conflict("job %d is %s %s: its steps can no longer run", jobID, j.Status, j.Conclusion)
	case !j.RunnerLostAt.IsZero():
		return nil, conflict("job %d lost its runner at %s", jobID, stamp(j.RunnerLostAt))
	case number < 0 || number > len(j.Steps):
		return nil, invalid("job %d has %d steps, not a step %d", jobID, len(j.Steps), number)
	}
	return j, nil
}

// externalStep is step number (counted from 1) of an External job whose steps
// can still be reported.
func (s *Server) externalStep(fullName string, jobID int64, number int) (*Step, error) {
	j, err := s.externalJob(fullName, jobID, number)
	if err != nil {
		return nil, err
	}
	if number == 0 {
		return nil, invalid("steps are counted from 1")
	}
	return &j.Steps[number-1], nil
}

// StartStep reports that step number (counted from 1) of an External job started now.
func (s *Server) StartStep(fullName string, jobID int64, number int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.externalStep(fullName, jobID, number)
	if err != nil {
		return err
	}
	st.Status, st.StartedAt = "in_progress", s.clock.Now()
	return nil
}

// EndStep reports that step number of an External job ended now with conclusion (success,
// failure, skipped, cancelled); a skipped step that never started starts and ends now.
func (s *Server) EndStep(fullName string, jobID int64, number int, conclusion string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.externalStep(fullName, jobID, number)
	if err != nil {
		return err
	}
	if !slices.Contains(runOutcomes, conclusion) {
		return invalid("step conclusion %q, want one of %v", conclusion, runOutcomes)
	}
	now := s.clock.Now()
	if st.StartedAt.IsZero() {
		st.StartedAt = now
	}
	st.Status, st.Conclusion, st.CompletedAt = "completed", conclusion, now
	return nil
}

// EndJob completes an External job now with conclusion; steps not reported are skipped and
// its ephemeral runner leaves, as after any job.
func (s *Server) EndJob(fullName string, jobID int64, conclusion string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.externalJob(fullName, jobID, 0)
	if err != nil {
		return err
	}
	if !slices.Contains(runOutcomes, conclusion) {
		return invalid("job conclusion %q, want one of %v", conclusion, runOutcomes)
	}
	s.finish(j, s.clock.Now(), conclusion, "skipped")
	return nil
}
