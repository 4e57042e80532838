package runpodsim_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name    string
		opt     runpodsim.Option
		wantErr string
	}{
		{name: "negative balance", opt: runpodsim.WithBalance(-1), wantErr: "balance -1 must not be negative"},
		{name: "negative page size", opt: runpodsim.WithPageSize(-2), wantErr: "page size -2 must not be negative"},
		{name: "negative quota", opt: runpodsim.WithQuota(-3), wantErr: "quota -3 must not be negative"},
		{name: "negative provisioning", opt: runpodsim.WithProvisioningDelay(-time.Second), wantErr: "must not be negative"},
		{name: "empty market", opt: runpodsim.WithMarket(runpodsim.Market{}), wantErr: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runpodsim.New(tc.opt)
			if tc.wantErr == "" {
				assert.NilError(t, err, "an empty market is valid: it sells nothing")
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestListenLoopback(t *testing.T) {
	server, err := runpodsim.New(runpodsim.WithAPIKey(testKey))
	assert.NilError(t, err)
	base, shutdown, err := server.ListenLoopback()
	assert.NilError(t, err)
	s := &sim{t: t, server: server, url: base, key: testKey}

	assert.Equal(t, s.do(http.MethodGet, "/v2/catalog/datacenters", nil).status, http.StatusOK)
	shutdown()
	_, err = http.Get(base + "/v2/pods")
	assert.Assert(t, err != nil, "nothing listens after shutdown")
}

// Requests, clock timers and inspection may interleave freely; run with -race.
func TestConcurrentClientsAndClock(t *testing.T) {
	s := newSim(t)
	const workers, each = 4, 10
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				s.advance(3 * time.Second)
				s.server.Spent()
			}
		}
	}()
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			// Worker goroutines must not stop the test; they report instead.
			for i := range each {
				if err := cycle(s, fmt.Sprintf("w%d-%d", w, i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	pods := s.server.Pods()
	assert.Equal(t, len(pods), workers*each)
	for _, p := range pods {
		assert.Equal(t, p.Status, runpodsim.StatusTerminated)
	}
	assert.Equal(t, len(s.server.Requests()), workers*each*3)
}

// cycle creates, reads and deletes one pod over raw HTTP.
func cycle(s *sim, name string) error {
	body := fmt.Sprintf(`{"name":%q,"image":"i","gpu":{"id":"NVIDIA GeForce RTX 4090"}}`, name)
	status, raw, err := send(s, http.MethodPost, "/v2/pods", body)
	if err != nil || status != http.StatusCreated {
		return fmt.Errorf("create %s: %d %s %v", name, status, raw, err)
	}
	var p struct{ ID string }
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	for _, step := range []struct {
		method string
		want   int
	}{{http.MethodGet, http.StatusOK}, {http.MethodDelete, http.StatusNoContent}} {
		if status, raw, err := send(s, step.method, "/v2/pods/"+p.ID, ""); err != nil || status != step.want {
			return fmt.Errorf("%s %s: %d %s %v", step.method, p.ID, status, raw, err)
		}
	}
	return nil
}

func send(s *sim, method, path, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}
