package provisionaction

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionio"
)

func keyLine(seed byte) string {
	blob := binary.BigEndian.AppendUint32(nil, 11)
	blob = append(blob, "ssh-ed25519"...)
	blob = binary.BigEndian.AppendUint32(blob, 32)
	for i := range 32 {
		blob = append(blob, seed+byte(i))
	}
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob)
}

// TestKeptPodIsReachableNeverWithAKeyFromTheEvent: debug-ssh-public-key is
// refused when the event payload holds it (a PR body, a branch name), when
// the payload cannot be read, and without keep-failed-pods.
func TestKeptPodIsReachableNeverWithAKeyFromTheEvent(t *testing.T) {
	maintainer, author := keyLine(1), keyLine(7)
	event := filepath.Join(t.TempDir(), "event.json")
	assert.NilError(t, os.WriteFile(event, []byte(`{"pull_request":{"body":"use my key `+author+` thanks"}}`), 0o600))
	tests := []struct {
		name      string
		key       string
		keep      bool
		eventPath string
		want      string
		wantErr   string
	}{
		{name: "no key", keep: true, eventPath: event},
		{name: "a maintainer's key", key: maintainer + " maintainer@host", keep: true, eventPath: event, want: maintainer},
		{name: "the PR author's key from the event", key: author, keep: true, eventPath: event, wantErr: "appears in this run's event payload"},
		{name: "without keep-failed-pods", key: maintainer, eventPath: event, wantErr: "keep-failed-pods is false"},
		{name: "no event payload", key: maintainer, keep: true, wantErr: "GITHUB_EVENT_PATH is unset"},
		{name: "an unreadable event payload", key: maintainer, keep: true, eventPath: event + ".missing", wantErr: "reading the event payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			io := actionio.New(&bytes.Buffer{}, func(k string) string {
				if k == "GITHUB_EVENT_PATH" {
					return tt.eventPath
				}
				return ""
			}, nil)
			got, err := debugKeyInput(io, Inputs{DebugSSHKey: tt.key, KeepFailedPods: tt.keep})
			if tt.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tt.wantErr))
				assert.Check(t, is.ErrorContains(err, "debug-ssh-public-key"))
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(got, tt.want))
		})
	}
}
