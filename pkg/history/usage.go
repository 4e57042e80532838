package history

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
)

// What the GPU job may record of its GPU, for right-sizing: nvidia-smi's
// samples, as the cost model's step (.github/docs/cost-model.md) writes them,
// printed into the GPU job's log one per line after UsageLinePrefix and the
// pod id ("-" for none). Evidence collected before the lane logged them
// carries them as the artifact UsageArtifactName(run, attempt) holding
// UsageFileName: the GPU job no longer uploads it, since an upload step after
// the pull request's code would hand that code the run's runtime token.
const (
	UsageLinePrefix     = "runpod-gpu-usage "
	UsageArtifactPrefix = "runpod-gpu-usage-"
	UsageFileName       = "gpu-usage.csv"
	// UsageQuery is the nvidia-smi query the step runs, sampled every second:
	//   nvidia-smi --query-gpu=<UsageQuery> --format=csv,noheader,nounits -l 1
	UsageQuery = "timestamp,index,name,memory.used,memory.total,utilization.gpu"
	// maxUsageBytes bounds the samples read: a day of one GPU sampled every second.
	maxUsageBytes = 8 << 20
)

// UsageArtifactName names a run attempt's GPU usage artifact.
func UsageArtifactName(runID int64, attempt int) string {
	return fmt.Sprintf("%s%d-%d", UsageArtifactPrefix, runID, attempt)
}

// PodUsageArtifactName names one pod's GPU usage artifact in a lane with a
// GPU job per pod (matrix_tiers), where one attempt uploads several.
func PodUsageArtifactName(runID int64, attempt int, podID string) string {
	return UsageArtifactName(runID, attempt) + "-" + podID
}

// isUsageArtifact reports whether an artifact is one of attempt k's GPU usages.
func isUsageArtifact(name string, k AttemptKey) bool {
	_, ok := usageArtifact(name, k)
	return ok
}

// usageArtifact reports whether an artifact is attempt k's GPU usage, and
// the pod it names ("" for the attempt's one GPU job).
func usageArtifact(name string, k AttemptKey) (podID string, ok bool) {
	base := UsageArtifactName(k.RunID, k.Attempt)
	if name == base {
		return "", true
	}
	podID, ok = strings.CutPrefix(name, base+"-")
	return podID, ok && podID != ""
}

// GPUUsage is what the GPU job recorded of its GPU: the peak memory of the
// busiest GPU and its utilisation. It comes from the job that runs the
// pull request's code, so it only informs the right-sizing advice; it never
// changes a cost.
type GPUUsage struct {
	GPU            string  `json:"gpu"` // as nvidia-smi names it
	Samples        int     `json:"samples"`
	PeakMemoryMiB  int     `json:"peakMemoryMiB"`
	TotalMemoryMiB int     `json:"totalMemoryMiB"`
	PeakUtilPct    int     `json:"peakUtilizationPercent"`
	MeanUtilPct    float64 `json:"meanUtilizationPercent"`
	Skipped        int     `json:"skippedLines"` // lines that were not a sample
}

// ParseGPUUsage reads nvidia-smi's CSV samples (UsageQuery, no header, no
// units). A line that is not a sample is skipped and counted; a field
// nvidia-smi could not read ("[N/A]") leaves that sample's value out. No
// sample at all is an error.
func ParseGPUUsage(r io.Reader) (GPUUsage, error) {
	var u GPUUsage
	utilSum, utilN := 0, 0
	sc := bufio.NewScanner(io.LimitReader(r, maxUsageBytes))
	sc.Buffer(make([]byte, 0, 4096), 4096)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) < 6 {
			u.Skipped += min(len(strings.TrimSpace(sc.Text())), 1)
			continue
		}
		n := len(f)
		used, errUsed := strconv.Atoi(strings.TrimSpace(f[n-3]))
		total, errTotal := strconv.Atoi(strings.TrimSpace(f[n-2]))
		if errUsed != nil || errTotal != nil || used < 0 || total <= 0 || used > total {
			u.Skipped++
			continue
		}
		u.Samples++
		if used >= u.PeakMemoryMiB {
			u.PeakMemoryMiB, u.TotalMemoryMiB = used, total
			u.GPU = strings.TrimSpace(strings.Join(f[2:n-3], ","))
		}
		if util, err := strconv.Atoi(strings.TrimSpace(f[n-1])); err == nil && util >= 0 && util <= 100 {
			u.PeakUtilPct = max(u.PeakUtilPct, util)
			utilSum, utilN = utilSum+util, utilN+1
		}
	}
	if err := sc.Err(); err != nil {
		return GPUUsage{}, fmt.Errorf("%s: %w", UsageFileName, err)
	}
	if u.Samples == 0 {
		return GPUUsage{}, fmt.Errorf("%s: no sample of %s (%d lines skipped)", UsageFileName, UsageQuery, u.Skipped)
	}
	if utilN > 0 {
		u.MeanUtilPct = float64(utilSum*10/utilN) / 10
	}
	return u, nil
}

// readUsageArtifact reads the samples from a downloaded usage artifact.
func readUsageArtifact(data []byte) (GPUUsage, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return GPUUsage{}, fmt.Errorf("archive: %w", err)
	}
	for _, f := range zr.File {
		if path.Base(f.Name) != UsageFileName {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return GPUUsage{}, fmt.Errorf("%s: %w", f.Name, err)
		}
		defer rc.Close()
		return ParseGPUUsage(rc)
	}
	return GPUUsage{}, fmt.Errorf("archive has no %s", UsageFileName)
}

// readUsage reads the GPU usage the attempt's GPU jobs logged, and the usage
// artifacts of evidence from before they logged it: the one GPU job's, and
// each pod's in a lane with a GPU job per pod.
func (a *Attempt) readUsage(st store, rec AttemptRecord, logs logScan) {
	pods := slices.Sorted(maps.Keys(logs.usage))
	for _, podID := range pods {
		u, err := ParseGPUUsage(bytes.NewReader(logs.usage[podID].Bytes()))
		if err != nil {
			a.warn("GPU usage logged for pod %q unreadable: %v", podID, err)
			continue
		}
		a.setUsage(podID, u)
	}
	for _, f := range rec.Artifacts {
		podID, ok := usageArtifact(f.Name, rec.Key())
		if !ok || f.State != StateComplete {
			continue
		}
		data, err := st.readFile(rec.Key(), f.fileName())
		var u GPUUsage
		if err == nil {
			u, err = readUsageArtifact(data)
		}
		if err != nil {
			a.warn("GPU usage %s unreadable: %v", f.Name, err)
			continue
		}
		a.setUsage(podID, u)
	}
}

// setUsage records a GPU job's usage: the attempt's one GPU job ("" pod) or a pod's.
func (a *Attempt) setUsage(podID string, u GPUUsage) {
	if podID == "" {
		a.GPUUsage = &u
		return
	}
	if a.PodGPUUsage == nil {
		a.PodGPUUsage = map[string]GPUUsage{}
	}
	a.PodGPUUsage[podID] = u
}

// usageOf is what the accepted pod's GPU job recorded: its own artifact, or
// the attempt's when the attempt had that one accepted pod.
func (a *Attempt) usageOf(pod Pod, acceptedPods int) (GPUUsage, bool) {
	if u, ok := a.PodGPUUsage[pod.ID]; ok {
		return u, true
	}
	if a.GPUUsage != nil && acceptedPods == 1 {
		return *a.GPUUsage, true
	}
	return GPUUsage{}, false
}
