package cost

import (
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestDecodePod(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantPod   string // Format/ID/GPU/Status
		wantStart string
		wantPrice string
		wantErr   string
	}{
		{
			name:      "v2 running",
			in:        `{"id":"abc","name":"rg-1","status":"RUNNING","gpu":{"id":"NVIDIA RTX A4000","count":1},"cost":0.4,"createdAt":"2026-09-23T08:47:00Z","startedAt":"2026-09-23T08:48:28.204Z"}`,
			wantPod:   "v2 abc NVIDIA RTX A4000 RUNNING",
			wantStart: "2026-09-23T08:48:28.204Z",
			wantPrice: "$0.40/h (v2 cost)",
		},
		{
			name:      "v2 exited reads cost 0: unknown, not free",
			in:        `{"id":"abc","status":"EXITED","cost":0,"startedAt":"2026-09-23T08:48:28Z"}`,
			wantPod:   "v2 abc  EXITED",
			wantStart: "2026-09-23T08:48:28Z",
			wantPrice: "unknown (v2 cost missing or 0; it reads 0 once the pod stops, so capture it while RUNNING)",
		},
		{
			name:      "v2 null start is never replaced by createdAt",
			in:        `{"id":"abc","status":"PROVISIONING","cost":0.4,"createdAt":"2026-09-23T08:47:00Z","startedAt":null}`,
			wantPod:   "v2 abc  PROVISIONING",
			wantStart: "unknown",
			wantPrice: "$0.40/h (v2 cost)",
		},
		{
			name:      "v2 cost as a numeric string",
			in:        `{"cost":"0.74","startedAt":""}`,
			wantPod:   "v2   ",
			wantStart: "unknown",
			wantPrice: "$0.74/h (v2 cost)",
		},
		{
			name:      "v1 adjustedCostPerHr wins when positive",
			in:        `{"id":"old1","desiredStatus":"RUNNING","costPerHr":"0.74","adjustedCostPerHr":0.52,"lastStartedAt":"2026-09-23 08:48:28.204 +0000 UTC","createdAt":"2026-09-23 08:40:00 +0000 UTC","machine":{"gpuTypeId":"NVIDIA GeForce RTX 4090"}}`,
			wantPod:   "v1 old1 NVIDIA GeForce RTX 4090 RUNNING",
			wantStart: "2026-09-23T08:48:28.204Z",
			wantPrice: "$0.52/h (v1 adjustedCostPerHr)",
		},
		{
			name:      "v1 costPerHr string when adjusted is 0",
			in:        `{"id":"old2","costPerHr":"0.74","adjustedCostPerHr":0,"lastStartedAt":"2026-09-23 10:48:28.123456789 +0200 CEST","gpu":{"id":"NVIDIA A40"}}`,
			wantPod:   "v1 old2 NVIDIA A40 ",
			wantStart: "2026-09-23T08:48:28.123456789Z",
			wantPrice: "$0.74/h (v1 costPerHr)",
		},
		{
			name:      "v1 costPerHr number, no fraction in Go layout",
			in:        `{"costPerHr":1.19,"lastStartedAt":"2026-09-23 08:48:28 +0000 UTC"}`,
			wantPod:   "v1   ",
			wantStart: "2026-09-23T08:48:28Z",
			wantPrice: "$1.19/h (v1 costPerHr)",
		},
		{
			name:      "v1 without price or start",
			in:        `{"desiredStatus":"EXITED","costPerHr":"","lastStartedAt":null}`,
			wantPod:   "v1   EXITED",
			wantStart: "unknown",
			wantPrice: "unknown (v1 adjustedCostPerHr and costPerHr missing or 0)",
		},
		{name: "not an object", in: `[1,2]`, wantErr: "pod record: invalid value: want a JSON object"},
		{name: "null", in: `null`, wantErr: "want a JSON object"},
		{name: "no cost keys", in: `{"id":"abc","createdAt":"2026-09-23T08:47:00Z"}`, wantErr: "not a RunPod pod record"},
		{name: "bad startedAt", in: `{"cost":0.4,"startedAt":"yesterday"}`, wantErr: `key "startedAt": invalid value: "yesterday": want an RFC 3339 timestamp or null`},
		{name: "numeric startedAt", in: `{"cost":0.4,"startedAt":17}`, wantErr: `key "startedAt": invalid value: 17`},
		{name: "bad lastStartedAt", in: `{"costPerHr":0.4,"lastStartedAt":"23/09/2026"}`, wantErr: `key "lastStartedAt": invalid value: "23/09/2026": want a timestamp (Go layout or RFC 3339)`},
		{name: "negative cost", in: `{"cost":-0.4,"startedAt":null}`, wantErr: `key "cost": invalid value: -0.4: want a non-negative price per hour`},
		{name: "cost not numeric", in: `{"cost":"cheap"}`, wantErr: `key "cost": invalid value: "cheap": want a number`},
		{name: "negative costPerHr", in: `{"costPerHr":"-1"}`, wantErr: `key "costPerHr": invalid value: -1`},
		{name: "adjusted not numeric", in: `{"adjustedCostPerHr":true}`, wantErr: `key "adjustedCostPerHr": invalid value: true`},
		{name: "gpu wrong type", in: `{"cost":0.4,"gpu":"A40"}`, wantErr: `key "gpu": invalid value: "A40": want an object {"id": string}`},
		{name: "id wrong type", in: `{"cost":0.4,"id":12}`, wantErr: `key "id": invalid value: 12: want a string`},
		{name: "machine wrong type", in: `{"costPerHr":0.4,"machine":[]}`, wantErr: `key "machine": invalid value: []`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod, err := DecodePod([]byte(tc.in))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Assert(t, errors.Is(err, ErrInvalidValue) || errors.Is(err, ErrNotPodRecord))
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, strings.Join([]string{string(pod.Format), pod.ID, pod.GPU, pod.Status}, " "), tc.wantPod)
			assert.Equal(t, pod.Start.String(), tc.wantStart)
			assert.Equal(t, pod.Price.String(), tc.wantPrice)
		})
	}
}

func TestDecodeExplicitFormat(t *testing.T) {
	v1 := []byte(`{"costPerHr":"0.74","lastStartedAt":"2026-09-23 08:48:28 +0000 UTC"}`)
	pod, err := DecodeV2Pod(v1)
	assert.NilError(t, err)
	assert.Equal(t, pod.Format, FormatV2)
	assert.Assert(t, !pod.Start.Known() && !pod.Price.Known, "a v1 record read as v2 has no v2 start or cost")

	pod, err = DecodeV1Record(v1)
	assert.NilError(t, err)
	assert.Equal(t, pod.Price.String(), "$0.74/h (v1 costPerHr)")

	_, err = DecodeV1Record([]byte(`"x"`))
	assert.Assert(t, errors.Is(err, ErrInvalidValue))
	_, err = DecodeV2Pod([]byte(`{`))
	assert.Assert(t, errors.Is(err, ErrInvalidValue))
}

// A pod record carries the JIT runner config in env; errors must never echo it.
func TestDecodePodErrorsDoNotLeakEnv(t *testing.T) {
	const secret = "JITCONFIG-SECRET-VALUE"
	for _, in := range []string{
		`{"env":{"RUNNER_JIT_CONFIG":"` + secret + `"},"cost":"x"}`,
		`{"env":{"RUNNER_JIT_CONFIG":"` + secret + `"},"startedAt":5}`,
		`{"env":{"RUNNER_JIT_CONFIG":"` + secret + `"},"cost":0.4,` + "\x00" + `}`,
		`{"env":{"RUNNER_JIT_CONFIG":"` + secret + `"}}`,
	} {
		_, err := DecodePod([]byte(in))
		assert.Assert(t, err != nil)
		assert.Assert(t, !strings.Contains(err.Error(), secret), "error leaks env: %v", err)
	}
}

func FuzzDecodePod(f *testing.F) {
	for _, seed := range []string{
		`{"id":"abc","status":"RUNNING","gpu":{"id":"NVIDIA RTX A4000"},"cost":0.4,"startedAt":"2026-09-23T08:48:28.204Z"}`,
		`{"cost":0,"startedAt":null,"createdAt":"2026-09-23T08:47:00Z"}`,
		`{"costPerHr":"0.74","adjustedCostPerHr":0.52,"lastStartedAt":"2026-09-23 08:48:28.204 +0000 UTC"}`,
		`{"costPerHr":"1e309"}`,
		`{"machine":{"gpuTypeId":null},"desiredStatus":"EXITED"}`,
		`[]`, `null`, `{"cost":"-0"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pod, err := DecodePod(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) && !errors.Is(err, ErrInvalidValue) && !errors.Is(err, ErrNotPodRecord) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if pod.Price.Known && !(pod.Price.PerHour > 0 && finite(pod.Price.PerHour)) {
			t.Fatalf("known price %v must be positive and finite", pod.Price.PerHour)
		}
		if pod.Format != FormatV1 && pod.Format != FormatV2 {
			t.Fatalf("format %q", pod.Format)
		}
	})
}
