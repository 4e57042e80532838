package provisionaction

import (
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/provision"
)

// podOutputs are the outputs published the moment a pod exists, before the
// run's result (provision.Outputs) is known.
type podOutputs struct {
	PodID         string `output:"pod-id"`
	CreatedPodIDs string `output:"created-pod-ids"`
}

// observer reports a run to the Actions runner: provision's log observer, and
// the pod-id output the moment a pod exists (the last one written wins: the
// accepted pod), so a failure-path cleanup can find the pod even if this
// process dies before it finishes.
type observer struct {
	provision.LogObserver
	io      *actionio.IO
	created []string
}

func newObserver(io *actionio.IO) *observer {
	return &observer{LogObserver: provision.LogObserver{Log: io}, io: io}
}

// PodCreated publishes the pod id and every pod created so far.
func (o *observer) PodCreated(podID string) {
	o.created = append(o.created, podID)
	o.publish(podID)
}

// PodForgotten takes back an id published as created that turned out to be
// another pod's (a create answer that named it): cleanup must never delete it.
func (o *observer) PodForgotten(podID string) {
	o.created = slices.DeleteFunc(o.created, func(id string) bool { return id == podID })
	last := ""
	if n := len(o.created); n > 0 {
		last = o.created[n-1]
	}
	o.publish(last)
}

// publish writes pod-id (the last one written wins) and created-pod-ids.
func (o *observer) publish(podID string) {
	err := actionio.WriteOutputs[podOutputs](o.io, podOutputs{PodID: podID, CreatedPodIDs: strings.Join(o.created, ",")})
	if err != nil {
		o.io.Warningf("could not publish pod id %s: %v", podID, err)
	}
}
