// Package lanerecord is the lane record: what one GPU lane run tested and
// where (GPU type, digest-pinned image, CUDA floor, tested ref, test archive
// artifact, test command), so runpod-gpu repro can start the same again on a
// developer pod. A lane job that runs no pull-request code writes it, seals it
// in its own log (cost.SealLine) and uploads it as an artifact.
package lanerecord

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/lazyre"
)

const (
	// Version is the record format this package writes and reads.
	Version = 1
	// FileName is the record's file inside its artifact.
	FileName = "lane-record.json"
	// ArtifactPrefix starts the record artifact's name, followed by the run
	// id and attempt ("runpod-gpu-lane-record-7001-1").
	ArtifactPrefix = "runpod-gpu-lane-record-"
	// MaxBytes bounds a record file; a larger one is refused unread.
	MaxBytes = 16 << 10
	// MaxCommandBytes bounds the test command.
	MaxCommandBytes = 4096
)

// ErrInvalid means a record is not one the lane writes.
var ErrInvalid = errors.New("invalid lane record")

// Record is one lane run's record.
type Record struct {
	Version    int    `json:"version"`
	Repository string `json:"repository"` // owner/name
	RunID      int64  `json:"run_id"`
	Attempt    int    `json:"attempt"`
	// GPUType is the RunPod GPU type id the tests ran on.
	GPUType  string `json:"gpu_type"`
	GPUCount int    `json:"gpu_count"`
	// Image is the container image pinned by digest (name@sha256:…).
	Image string `json:"image"`
	// CUDAFloor is the host CUDA floor ("12.6") the pod was created with.
	CUDAFloor string `json:"cuda_floor"`
	// TestedRef is the commit the tests ran on.
	TestedRef string `json:"tested_ref"`
	// TestArchive names the run's artifact holding the test archive.
	TestArchive string `json:"test_archive_artifact"`
	// TestCommand is the lane's test-command input, run in the archive's folder.
	TestCommand string `json:"test_command"`
	// LifetimeSeconds is the lane's pod lifetime bound (lifetime_seconds).
	LifetimeSeconds int `json:"lifetime_seconds"`
	// DiskGB is the lane's container disk.
	DiskGB int `json:"disk_gb"`
}

// ArtifactName is the name of run runID attempt attempt's record artifact.
func ArtifactName(runID int64, attempt int) string {
	return fmt.Sprintf("%s%d-%d", ArtifactPrefix, runID, attempt)
}

var (
	repoRE     = lazyre.Regexp{Pattern: `^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$`}
	imageRE    = lazyre.Regexp{Pattern: `^[a-z0-9][a-z0-9._/:-]{0,254}@sha256:[0-9a-f]{64}$`}
	cudaRE     = lazyre.Regexp{Pattern: `^[0-9]{1,2}\.[0-9]{1,2}$`}
	shaRE      = lazyre.Regexp{Pattern: `^[0-9a-f]{40}$`}
	artifactRE = lazyre.Regexp{Pattern: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`}
)

// Marshal returns the record as the lane writes it, after Validate.
func (r Record) Marshal() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	return append(data, '\n'), err
}

// Parse reads a record file strictly: unknown keys, trailing data, a file
// over MaxBytes and any invalid field are refused with ErrInvalid.
func Parse(data []byte) (Record, error) {
	var r Record
	if len(data) > MaxBytes {
		return r, fmt.Errorf("%w: %d bytes, want at most %d", ErrInvalid, len(data), MaxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Record{}, fmt.Errorf("%w: data after the record", ErrInvalid)
	}
	if err := r.Validate(); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Validate checks every field; the error names the key, the value and what
// is expected.
func (r Record) Validate() error {
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("%w: %s = %q: want %s", ErrInvalid, key, fmt.Sprint(v), want)
	}
	switch {
	case r.Version != Version:
		return bad("version", r.Version, fmt.Sprint(Version))
	case !repoRE.MatchString(r.Repository):
		return bad("repository", r.Repository, "owner/name")
	case r.RunID <= 0:
		return bad("run_id", r.RunID, "a positive workflow run id")
	case r.Attempt <= 0:
		return bad("attempt", r.Attempt, "a positive run attempt")
	case !printable(r.GPUType, 100):
		return bad("gpu_type", r.GPUType, "a RunPod GPU type id of 1 to 100 printable characters")
	case r.GPUCount < 1 || r.GPUCount > 16:
		return bad("gpu_count", r.GPUCount, "1 to 16")
	case !imageRE.MatchString(r.Image):
		return bad("image", r.Image, "an image pinned by digest, name@sha256:<64 hex>")
	case !cudaRE.MatchString(r.CUDAFloor):
		return bad("cuda_floor", r.CUDAFloor, "a CUDA version major.minor such as 12.6")
	case !shaRE.MatchString(r.TestedRef):
		return bad("tested_ref", r.TestedRef, "a 40-hex commit SHA")
	case !artifactRE.MatchString(r.TestArchive):
		return bad("test_archive_artifact", r.TestArchive, "an artifact name of letters, digits, '.', '_' or '-'")
	case strings.TrimSpace(r.TestCommand) == "" || len(r.TestCommand) > MaxCommandBytes || strings.ContainsRune(r.TestCommand, 0):
		return fmt.Errorf("%w: test_command: want 1 to %d bytes without NUL", ErrInvalid, MaxCommandBytes)
	case r.LifetimeSeconds < 60 || r.LifetimeSeconds > 24*3600:
		return bad("lifetime_seconds", r.LifetimeSeconds, "60 to 86400")
	case r.DiskGB < 1 || r.DiskGB > config.MaxDiskGB:
		return bad("disk_gb", r.DiskGB, fmt.Sprintf("1 to %d", config.MaxDiskGB))
	}
	return nil
}

// printable reports whether s is 1 to max printable characters.
func printable(s string, max int) bool {
	if s == "" || len(s) > max || strings.TrimSpace(s) != s {
		return false
	}
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}
