package smoke

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
)

// Fetcher opens url for reading with a plain GET (no credentials). Closing
// the reader ends the transfer and returns its verdict: an HTTP error or a
// transfer cut short fails there, after the body was read.
type Fetcher func(ctx context.Context, url string) (io.ReadCloser, error)

// FetchTimeoutSeconds bounds one CurlFetch transfer.
const FetchTimeoutSeconds = 300

// CurlFetch fetches with curl, which the startup script already needs to
// fetch the proof itself: the proof carries no HTTP or TLS stack of its own,
// which was half of its size. Only http and https are followed, redirects
// included; an HTTP error status fails.
func CurlFetch(ctx context.Context, url string) (io.ReadCloser, error) {
	cmd := exec.CommandContext(ctx, "curl", "--fail", "--silent", "--show-error", "--location",
		"--proto", "=http,https", "--proto-redir", "=http,https",
		"--max-time", fmt.Sprint(FetchTimeoutSeconds), "--", url)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &boundedBuffer{max: 4096}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("curl: %w (the proof fetches NVRTC packages with curl)", err)
	}
	return &curlBody{ReadCloser: stdout, cmd: cmd, stderr: stderr}, nil
}

// curlBody is curl's output; Close waits for curl and reports how it ended.
type curlBody struct {
	io.ReadCloser
	cmd    *exec.Cmd
	stderr *boundedBuffer
	once   sync.Once
	err    error
}

func (b *curlBody) Close() error {
	b.once.Do(func() {
		b.ReadCloser.Close() // an unread rest ends curl (a write to a closed pipe)
		if err := b.cmd.Wait(); err != nil {
			var exit *exec.ExitError
			if msg := strings.TrimSpace(b.stderr.String()); msg != "" && errors.As(err, &exit) {
				err = fmt.Errorf("%s (curl exit %d)", msg, exit.ExitCode())
			}
			b.err = err
		}
	})
	return b.err
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
