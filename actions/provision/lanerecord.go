package provisionaction

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/actionkit"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/lanerecord"
	"github.com/org/runpod-gpu/pkg/provision"
)

// recordDir is where, inside the workspace, the lane record is written
// (upload-artifact reads it from there, outside this container).
const recordDir = "runpod-gpu-lane-record"

// recordOutputs name the lane record runpod-gpu repro reads; both are empty
// when no pod was accepted.
type recordOutputs struct {
	LaneRecordPath string `output:"lane-record-path"`
	LaneRecordName string `output:"lane-record-name"`
}

// recordLane writes the lane record of res's first accepted pod, if any,
// and the outputs naming it.
func recordLane(io *actionio.IO, res provision.LaneResult, cfg *config.Config, current actionkit.Run, in Inputs) error {
	var out recordOutputs
	if rec, ok := laneRecordOf(res, cfg, current, in); ok {
		out = writeLaneRecord(io, rec)
	}
	return actionio.WriteOutputs[recordOutputs](io, out)
}

// laneRecordOf is the record of the lane's first accepted pod, in tier
// order; ok is false when no pod was accepted.
func laneRecordOf(res provision.LaneResult, cfg *config.Config, current actionkit.Run, in Inputs) (lanerecord.Record, bool) {
	for _, run := range res.Runs {
		a := run.Result.Accepted
		if a == nil || run.Result.Image == "" {
			continue
		}
		return lanerecord.Record{
			Version: lanerecord.Version, Repository: current.Repository, RunID: current.ID, Attempt: current.Attempt,
			GPUType: a.GPU, GPUCount: cfg.GPUCount, Image: run.Result.Image, CUDAFloor: cfg.MinCUDAVersion.String(),
			TestedRef: string(in.TestedRef), TestArchive: strings.TrimSpace(in.TestArchiveArtifact), TestCommand: in.TestCommand,
			LifetimeSeconds: cfg.LifetimeSeconds, DiskGB: cfg.DiskGB,
		}, true
	}
	return lanerecord.Record{}, false
}

// writeLaneRecord writes the lane record into the workspace, prints its seal
// (this job runs no pull-request code: repro trusts only a record this job's
// log vouches for) and returns the outputs naming it. A record that cannot
// be written is a warning: the pod is provisioned, only repro is lost.
func writeLaneRecord(io *actionio.IO, rec lanerecord.Record) recordOutputs {
	data, err := rec.Marshal()
	if err != nil {
		io.Warningf("lane record not written, runpod-gpu repro cannot start this run again: %v", err)
		return recordOutputs{}
	}
	dir, err := io.ResolvePath("lane record directory", recordDir, recordDir, actionio.RootWorkspace)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	path := filepath.Join(dir, lanerecord.FileName)
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	var rel string
	if err == nil {
		rel, err = io.WorkspaceRelative(dir)
	}
	if err != nil {
		io.Warningf("lane record not written, runpod-gpu repro cannot start this run again: %v", err)
		return recordOutputs{}
	}
	io.Infof("lane record %s: %s x%d, image %s, CUDA >= %s, tested ref %s", lanerecord.ArtifactName(rec.RunID, rec.Attempt), rec.GPUType, rec.GPUCount, rec.Image, rec.CUDAFloor, rec.TestedRef)
	io.Infof("%s", cost.SealLine(data).Format())
	return recordOutputs{LaneRecordPath: filepath.Join(rel, lanerecord.FileName), LaneRecordName: lanerecord.ArtifactName(rec.RunID, rec.Attempt)}
}
