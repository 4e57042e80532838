package provision

import (
	"sync"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/sim/cloud"
)

// pacerCalls records what a LogPacer hears.
type pacerCalls struct {
	mu    sync.Mutex
	calls []pacerCall
}

type pacerCall struct {
	pod   string
	ended bool
}

func (p *pacerCalls) LogTaken(podID string, ended bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, pacerCall{podID, ended})
}

// A pacer hears the reader catch up with the pod's log stream after each
// batch of lines, and its end once, last; the run goes as without one (every
// other test runs with none: the shipped lane's nil pacer is never called).
func TestLogPacerHearsTheReaderCatchUp(t *testing.T) {
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000))}, onlyA4000)
	pacer := &pacerCalls{}
	s.deps.LogPacer = pacer

	res, err := s.run(t)

	assert.NilError(t, err)
	assert.Assert(t, res.Accepted != nil)
	pacer.mu.Lock()
	defer pacer.mu.Unlock()
	assert.Assert(t, len(pacer.calls) >= 2, "%v", pacer.calls)
	for _, c := range pacer.calls {
		assert.Check(t, is.Equal(c.pod, res.Accepted.PodID))
	}
	last := pacer.calls[len(pacer.calls)-1]
	assert.Check(t, last.ended, "the stream's end comes last: %v", pacer.calls)
	for _, c := range pacer.calls[:len(pacer.calls)-1] {
		assert.Check(t, !c.ended, "one end: %v", pacer.calls)
	}
}
