package lanerecord

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func validRecord() Record {
	return Record{Version: Version, Repository: "acme/model", RunID: 7001, Attempt: 1, GPUType: "NVIDIA RTX A5000", GPUCount: 1,
		Image: "ghcr.io/acme/ci:1@sha256:" + strings.Repeat("ab", 32), CUDAFloor: "12.6", TestedRef: strings.Repeat("b", 40),
		TestArchive: "runpod-gpu-tests-7001-1", TestCommand: "make test-gpu", LifetimeSeconds: 3600, DiskGB: 50}
}

func TestRecordRoundTrips(t *testing.T) {
	data, err := validRecord().Marshal()
	assert.NilError(t, err)
	got, err := Parse(data)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(got, validRecord()))
}

func TestParseRefusesWhatTheLaneNeverWrites(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*Record)
		raw     string
		wantErr string
	}{
		{name: "image by tag", edit: func(r *Record) { r.Image = "ghcr.io/acme/ci:1" }, wantErr: `image = "ghcr.io/acme/ci:1": want an image pinned by digest`},
		{name: "CUDA floor", edit: func(r *Record) { r.CUDAFloor = "12" }, wantErr: `cuda_floor = "12"`},
		{name: "tested ref", edit: func(r *Record) { r.TestedRef = "main" }, wantErr: `tested_ref = "main": want a 40-hex commit SHA`},
		{name: "GPU type", edit: func(r *Record) { r.GPUType = "" }, wantErr: `gpu_type = ""`},
		{name: "GPU count", edit: func(r *Record) { r.GPUCount = 0 }, wantErr: `gpu_count = "0": want 1 to 16`},
		{name: "artifact", edit: func(r *Record) { r.TestArchive = "../x" }, wantErr: `test_archive_artifact = "../x"`},
		{name: "command", edit: func(r *Record) { r.TestCommand = " " }, wantErr: "test_command: want 1 to 4096 bytes"},
		{name: "lifetime", edit: func(r *Record) { r.LifetimeSeconds = 0 }, wantErr: `lifetime_seconds = "0": want 60 to 86400`},
		{name: "disk", edit: func(r *Record) { r.DiskGB = 5000 }, wantErr: `disk_gb = "5000"`},
		{name: "version", edit: func(r *Record) { r.Version = 2 }, wantErr: `version = "2": want 1`},
		{name: "repository", edit: func(r *Record) { r.Repository = "acme" }, wantErr: `repository = "acme": want owner/name`},
		{name: "run id", edit: func(r *Record) { r.RunID = -1 }, wantErr: `run_id = "-1"`},
		{name: "unknown key", raw: `{"version":1,"extra":true}`, wantErr: `unknown field "extra"`},
		{name: "trailing data", raw: "{}{}", wantErr: "invalid lane record"},
		{name: "too large", raw: strings.Repeat(" ", MaxBytes+1), wantErr: "want at most"},
		{name: "not JSON", raw: "version: 1", wantErr: "invalid lane record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.raw)
			if tc.edit != nil {
				r := validRecord()
				tc.edit(&r)
				_, err := r.Marshal()
				assert.Check(t, errors.Is(err, ErrInvalid), "Marshal refuses it too: %v", err)
				var merr error
				data, merr = jsonOf(r)
				assert.NilError(t, merr)
			}
			_, err := Parse(data)
			assert.Check(t, errors.Is(err, ErrInvalid))
			assert.Check(t, is.ErrorContains(err, tc.wantErr))
		})
	}
}

func TestArtifactName(t *testing.T) {
	assert.Check(t, is.Equal(ArtifactName(7001, 2), "runpod-gpu-lane-record-7001-2"))
}

func FuzzParse(f *testing.F) {
	data, _ := validRecord().Marshal()
	f.Add(data)
	f.Add([]byte(`{"version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			return
		}
		if verr := r.Validate(); verr != nil {
			t.Fatalf("Parse accepted an invalid record: %v", verr)
		}
		again, err := r.Marshal()
		if err != nil {
			t.Fatalf("an accepted record does not marshal: %v", err)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("a marshalled record does not parse: %v", err)
		}
	})
}

// jsonOf marshals r without validating it.
func jsonOf(r Record) ([]byte, error) { return json.Marshal(r) }
