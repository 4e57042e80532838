package provision

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/sim/cloud"
	"github.com/org/runpod-gpu/pkg/startup"
)

// testKey is an OpenSSH public key line of type typ over a fixed 32-byte key.
func testKey(typ string, seed byte) string {
	blob := binary.BigEndian.AppendUint32(nil, uint32(len(typ)))
	blob = append(blob, typ...)
	blob = binary.BigEndian.AppendUint32(blob, 32)
	for i := range 32 {
		blob = append(blob, seed+byte(i))
	}
	return typ + " " + base64.StdEncoding.EncodeToString(blob)
}

var maintainerKey = testKey("ssh-ed25519", 1)

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	assert.NilError(t, err)
	return b
}

// typeOnlyKey is a key line whose blob holds its type and no key data.
func typeOnlyKey(typ string) string {
	blob := append(binary.BigEndian.AppendUint32(nil, uint32(len(typ))), typ...)
	return typ + " " + base64.StdEncoding.EncodeToString(blob)
}

func TestParseDebugSSHKey(t *testing.T) {
	authorKey := testKey("ssh-ed25519", 9)
	event := []byte(`{"pull_request":{"body":"please let me in: ` + authorKey + ` mallory@laptop"}}`)
	tests := []struct {
		name, key string
		event     []byte
		want      string
		wantErr   string
	}{
		{name: "a maintainer key with a comment", key: maintainerKey + " maintainer@host\n", event: event, want: maintainerKey},
		{name: "no event payload to compare", key: maintainerKey, want: maintainerKey},
		{name: "a key the PR's event carries", key: authorKey, event: event, wantErr: "appears in this run's event payload"},
		{name: "two lines", key: maintainerKey + "\n" + authorKey, wantErr: "more than one line"},
		{name: "one field", key: "ssh-ed25519", wantErr: "want TYPE BASE64 [comment]"},
		{name: "unknown type", key: "ssh-dss AAAA", wantErr: `key type "ssh-dss" is not one sshd accepts`},
		{name: "not base64", key: "ssh-ed25519 !!!!", wantErr: "not base64"},
		{name: "blob of another type", key: "ssh-rsa " + strings.Fields(maintainerKey)[1], wantErr: "does not hold a ssh-rsa key"},
		{name: "short blob", key: "ssh-ed25519 AAAA", wantErr: "does not hold a ssh-ed25519 key"},
		{name: "blob of the type alone", key: typeOnlyKey("ssh-ed25519"), wantErr: "does not hold a ssh-ed25519 key"},
		{name: "blob of the type and a stray byte", key: "ssh-ed25519 " + base64.StdEncoding.EncodeToString(append(append(binary.BigEndian.AppendUint32(nil, 11), "ssh-ed25519"...), 0)),
			wantErr: "does not hold a ssh-ed25519 key"},
		{name: "an ed25519 key cut short", key: "ssh-ed25519 " + base64.StdEncoding.EncodeToString(mustDecode(t, strings.Fields(maintainerKey)[1])[:40]),
			wantErr: "does not hold a ssh-ed25519 key"},
		{name: "blob cut inside its type", key: "ssh-ed25519 " + base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, 11)), wantErr: "does not hold a ssh-ed25519 key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDebugSSHKey(tt.key, tt.event)
			if tt.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tt.wantErr))
				assert.Check(t, is.ErrorContains(err, "debug-ssh-public-key"), "the error names the input")
				var keyErr *DebugKeyError
				assert.Check(t, errors.As(err, &keyErr))
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tt.want)
		})
	}
}

func FuzzParseDebugSSHKey(f *testing.F) {
	f.Add(maintainerKey+" c", []byte("{}"))
	f.Add("ssh-rsa AAAA\n", []byte(maintainerKey))
	f.Fuzz(func(t *testing.T, key string, event []byte) {
		got, err := ParseDebugSSHKey(key, event)
		if err != nil {
			return
		}
		// What is accepted is one line of two fields that parses again.
		assert.Check(t, !strings.ContainsAny(got, "\r\n"))
		assert.Check(t, is.Len(strings.Fields(got), 2))
		again, err := ParseDebugSSHKey(got, nil)
		assert.NilError(t, err)
		assert.Equal(t, again, got)
	})
}

// keptScenario runs provision on a market whose first host fails the CUDA
// proof, with keep-failed-pods, and returns the kept pod as the API lists it.
func keptScenario(t *testing.T, key string) (Result, runpod.Pod, *scenario) {
	t.Helper()
	s := newScenario(t, cloud.Options{Market: market(host("h1", a4000, oldPTX), host("h2", a5000))}, nil)
	s.req.KeepFailedPods, s.req.DebugSSHKey = true, key
	res, err := s.run(t)
	assert.NilError(t, err)
	assert.Assert(t, is.Len(res.RetainedPodIDs, 1))
	s.clock.Advance(time.Minute)
	for _, p := range s.livePods(t) {
		if p.ID == res.RetainedPodIDs[0] {
			return res, p, s
		}
	}
	t.Fatalf("kept pod %s is not listed", res.RetainedPodIDs[0])
	return res, runpod.Pod{}, s
}

func TestKeptPodIsReachableWithTheMaintainerKey(t *testing.T) {
	res, kept, s := keptScenario(t, maintainerKey)
	assert.DeepEqual(t, kept.Ports, []string{"22/tcp"})
	assert.Equal(t, kept.Env[startup.DebugKeyEnv], maintainerKey)
	e, ok := kept.DirectSSH()
	assert.Assert(t, ok, "the kept pod has a public mapping of 22/tcp")
	assert.Check(t, e.Port > 0 && e.Host != "")
	// sshd starts only once the startup script (and so the GPU job) ended.
	cmd := createdCmd(s, kept.ID)
	script, sshd := strings.Index(cmd, "/bin/bash -c '"), strings.Index(cmd, "exec /usr/sbin/sshd")
	assert.Check(t, script > 0 && sshd > script, "the key is installed after the script ran:\n%s", cmd)
	assert.Check(t, strings.Index(cmd, "authorized_keys") > script)

	summary := res.Summary(nil)
	assert.Check(t, is.Contains(summary, "`runpod-gpu ssh "+kept.ID+"`"))
	assert.Check(t, is.Contains(summary, "/h until deleted: up to $"))
	deadline := res.Kept[0].CreatedAt.Add(24 * time.Hour).UTC().Format(time.RFC3339)
	assert.Check(t, is.Contains(summary, "The reaper deletes it at its first sweep after "+deadline))
}

func TestKeptPodIsReachableOnlyWithTheInput(t *testing.T) {
	res, kept, s := keptScenario(t, "")
	assert.Check(t, is.Len(kept.Ports, 0))
	_, has := kept.Env[startup.DebugKeyEnv]
	assert.Check(t, !has, "no PUBLIC_KEY without the input")
	_, ok := kept.DirectSSH()
	assert.Check(t, !ok)
	assert.Check(t, !strings.Contains(createdCmd(s, kept.ID), "sshd"))
	assert.Check(t, !strings.Contains(res.Summary(nil), "runpod-gpu ssh"))
}

// createdCmd is the container command pod id was created with.
func createdCmd(s *scenario, id string) string {
	for _, p := range s.cloud.RunPod.Pods() {
		if p.ID == id && len(p.Cmd) == 1 {
			return p.Cmd[0]
		}
	}
	return ""
}

// TestKeptSummarySaysWhatAKeptPodBills: a kept pod's line gives its hourly
// price and the most it can bill to the retention cap, or says the price is
// unknown (never $0.00, which would read as free).
func TestKeptSummarySaysWhatAKeptPodBills(t *testing.T) {
	created := time.Date(2026, 12, 8, 1, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		kept    KeptPod
		want    []string
		wantNot string
	}{
		{name: "priced", kept: KeptPod{ID: "p1", PerHour: money.PerHour(0.25), CreatedAt: created},
			want: []string{"`runpod-gpu ssh p1`", "It bills $0.25/h until deleted: up to $6.00 over the reaper's 24 h retention cap.", "2026-12-09T01:00:00Z"}, wantNot: "unknown"},
		{name: "price unknown", kept: KeptPod{ID: "p2"},
			want: []string{"`runpod-gpu ssh p2`", "Its price is unknown; it bills until deleted."}, wantNot: "It bills $"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := keptSummary([]KeptPod{tt.kept})
			for _, w := range tt.want {
				assert.Check(t, is.Contains(got, w))
			}
			assert.Check(t, !strings.Contains(got, tt.wantNot), "%q in %q", tt.wantNot, got)
		})
	}
}
