package ownership

import (
	"errors"
	"testing"

	"gotest.tools/v3/assert"
)

func TestFormatRetentionName(t *testing.T) {
	tests := []struct {
		name    string
		runID   int64
		attempt int
		ids     []string
		want    string
		wantErr string
	}{
		{name: "one pod", runID: 9001, attempt: 2, ids: []string{"abc123"}, want: "runpod-debug-retained-9001-2-abc123"},
		{name: "order kept", runID: 7, attempt: 1, ids: []string{"podB", "podA"}, want: "runpod-debug-retained-7-1-podB,podA"},
		{name: "no pods", runID: 7, attempt: 1, wantErr: "no pod ids"},
		{name: "zero run", runID: 0, attempt: 1, ids: []string{"a"}, wantErr: "run id 0"},
		{name: "zero attempt", runID: 7, attempt: 0, ids: []string{"a"}, wantErr: "run attempt 0"},
		{name: "comma in id", runID: 7, attempt: 1, ids: []string{"a,b"}, wantErr: `pod id "a,b"`},
		{name: "empty id", runID: 7, attempt: 1, ids: []string{""}, wantErr: `pod id ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FormatRetentionName(tc.runID, tc.attempt, tc.ids)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got, tc.want)
		})
	}
}

func TestParseRetentionName(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Retention
		wantErr error
		wantMsg string
	}{
		{name: "two pods", in: "runpod-debug-retained-9001-2-abc,def", want: Retention{RunID: 9001, Attempt: 2, PodIDs: []string{"abc", "def"}}},
		{name: "other artifact", in: "runpod-gpu-cost-9001-2", wantErr: ErrNotRetentionName},
		{name: "no pods", in: "runpod-debug-retained-9001-2-", wantErr: ErrMalformedRetentionName, wantMsg: `pod id ""`},
		{name: "missing attempt", in: "runpod-debug-retained-9001", wantErr: ErrMalformedRetentionName, wantMsg: "missing a part"},
		{name: "leading zero", in: "runpod-debug-retained-09001-2-abc", wantErr: ErrMalformedRetentionName, wantMsg: "run id"},
		{name: "signed attempt", in: "runpod-debug-retained-9001-+2-abc", wantErr: ErrMalformedRetentionName, wantMsg: "run attempt"},
		{name: "run overflows", in: "runpod-debug-retained-99999999999999999999-1-abc", wantErr: ErrMalformedRetentionName, wantMsg: "out of range"},
		{name: "empty id between commas", in: "runpod-debug-retained-1-1-a,,b", wantErr: ErrMalformedRetentionName, wantMsg: "pod id"},
		{name: "dash in id", in: "runpod-debug-retained-1-1-a-b", wantErr: ErrMalformedRetentionName, wantMsg: `pod id "a-b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseRetentionName(tc.in)
			if tc.wantErr != nil {
				assert.Assert(t, errors.Is(err, tc.wantErr), "got %v", err)
				if tc.wantMsg != "" {
					assert.ErrorContains(t, err, tc.wantMsg)
				}
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
			assert.Check(t, got.Retains(tc.want.RunID, tc.want.Attempt, tc.want.PodIDs[0]))
			assert.Check(t, !got.Retains(tc.want.RunID, tc.want.Attempt+1, tc.want.PodIDs[0]), "another attempt's record retains nothing")
		})
	}
}

// FuzzParseRetentionName proves the name format is defined once: whatever
// Parse accepts formats back to the same name, and never panics.
func FuzzParseRetentionName(f *testing.F) {
	for _, seed := range []string{
		"runpod-debug-retained-9001-2-abc,def", "runpod-debug-retained-1-1-", "runpod-debug-retained--1-x",
		"runpod-debug-retained-1-1-a,,b", "other", "runpod-debug-retained-9223372036854775807-2147483647-Z",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, name string) {
		r, err := ParseRetentionName(name)
		if err != nil {
			if !errors.Is(err, ErrNotRetentionName) && !errors.Is(err, ErrMalformedRetentionName) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		back, err := FormatRetentionName(r.RunID, r.Attempt, r.PodIDs)
		if err != nil || back != name {
			t.Fatalf("parsed %q as %+v, which formats to %q (%v)", name, r, back, err)
		}
	})
}
