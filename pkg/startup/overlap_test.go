package startup

import (
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// TestProofDownloadOverlapsTheMachineReport: the proof is fetched in the
// background from the script's first moment, so the download is in flight
// while the rest of the start runs. The server holds the proof's download open
// until the machine report has run, and the stand-in nvidia-smi (part of the
// machine report) asks the server whether the download has begun; only a
// download in flight during the report satisfies both. A script that reported
// first and fetched after fails the report's side, and one that fetched in the
// foreground before reporting fails the download's side (each after waiting
// out a bound only the failing case reaches).
func TestProofDownloadOverlapsTheMachineReport(t *testing.T) {
	h := newHost(t, 0)
	started, reported := make(chan struct{}), make(chan struct{})
	var startOnce, reportOnce sync.Once
	var reportDuringDownload atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/cuda-smoke", func(w http.ResponseWriter, r *http.Request) {
		startOnce.Do(func() { close(started) })
		select {
		case <-reported:
			reportDuringDownload.Store(true)
		case <-time.After(5 * time.Second): // only the failing case waits this out
		}
		_, _ = w.Write(h.proof)
	})
	mux.HandleFunc("/download-started", func(w http.ResponseWriter, r *http.Request) {
		reportOnce.Do(func() { close(reported) })
		select {
		case <-started:
			_, _ = w.Write([]byte("overlapped"))
		case <-time.After(5 * time.Second): // only the failing case waits this out
			_, _ = w.Write([]byte("sequential"))
		}
	})
	h.server.Config.Handler = mux
	smi := "#!/bin/sh\ncurl -fsS " + h.server.URL + "/download-started > " + h.records + "/overlap\n" +
		"echo 'NVIDIA GeForce RTX 4090, 570.86.15, 24564 MiB'\n"
	assert.NilError(t, os.WriteFile(filepath.Join(h.dir, "bin", "nvidia-smi"), []byte(smi), 0o755))

	p := h.params()
	script, err := Render(p)
	assert.NilError(t, err)
	env := map[string]string{JITConfigEnv: jitConfig}
	for k, v := range PodEnv(p) {
		env[k] = v
	}
	code, out := h.run(t, script, env)
	assert.Equal(t, code, 0, "output:\n%s", out)
	assert.Check(t, is.Contains(out, "proof passed: starting the runner"))
	overlap, _ := h.recorded("overlap")
	assert.Check(t, is.Equal(overlap, "overlapped"), "the machine report ran before the proof's download began")
	assert.Check(t, reportDuringDownload.Load(), "the proof's download ended before the machine report ran: it did not overlap")
}
