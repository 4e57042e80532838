package localgate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// GPUInfo is what nvidia-smi reports about the machine the lane runs on.
type GPUInfo struct {
	Name        string // one GPU's name, "N x <name>" for identical GPUs, else names joined by ", "
	Driver      string
	CUDAVersion string
}

// gpuQueryArgs ask nvidia-smi for one "name, driver_version" line per GPU.
var gpuQueryArgs = []string{"--query-gpu=name,driver_version", "--format=csv,noheader"}

// QueryGPU asks nvidia-smi (found on PATH by ex) for the GPUs, driver and the
// driver's CUDA version. The CUDA version is only in nvidia-smi's banner.
func QueryGPU(ctx context.Context, ex Exec) (GPUInfo, error) {
	query, err := output(ctx, ex, "", "nvidia-smi", gpuQueryArgs...)
	if err != nil {
		return GPUInfo{}, fmt.Errorf("query the GPU: %w", err)
	}
	names, driver, err := ParseGPUQuery(query)
	if err != nil {
		return GPUInfo{}, fmt.Errorf("query the GPU: %w", err)
	}
	banner, err := output(ctx, ex, "", "nvidia-smi")
	if err != nil {
		return GPUInfo{}, fmt.Errorf("read the CUDA version: %w", err)
	}
	cuda, err := ParseCUDAVersion(banner)
	if err != nil {
		return GPUInfo{}, fmt.Errorf("read the CUDA version: %w", err)
	}
	return GPUInfo{Name: describeGPUs(names), Driver: driver, CUDAVersion: cuda}, nil
}

// ParseGPUQuery reads the output of
// "nvidia-smi --query-gpu=name,driver_version --format=csv,noheader": one
// "name, driver" line per GPU. Every GPU must report the same driver.
func ParseGPUQuery(out string) (names []string, driver string, err error) {
	for i, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// Split at the last comma: a driver version never has one.
		comma := strings.LastIndex(line, ",")
		if comma < 0 {
			return nil, "", fmt.Errorf("nvidia-smi line %d %q: want \"<name>, <driver version>\"", i+1, clipText(line))
		}
		name, drv := strings.TrimSpace(line[:comma]), strings.TrimSpace(line[comma+1:])
		if err := checkField(keyGPU, name); err != nil {
			return nil, "", fmt.Errorf("nvidia-smi line %d: %w", i+1, err)
		}
		if err := checkField(keyDriver, drv); err != nil {
			return nil, "", fmt.Errorf("nvidia-smi line %d: %w", i+1, err)
		}
		if driver != "" && drv != driver {
			return nil, "", fmt.Errorf("nvidia-smi reports two drivers, %q and %q; want one", driver, clipText(drv))
		}
		driver = drv
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, "", errors.New("nvidia-smi lists no GPU")
	}
	return names, driver, nil
}

// cudaBannerRE finds "CUDA Version: 12.4" in nvidia-smi's banner.
var cudaBannerRE = lazyre.Regexp{Pattern: `CUDA Version:\s*([0-9]{1,3}\.[0-9]{1,3})\b`}

// ParseCUDAVersion reads the driver's CUDA version from nvidia-smi's banner.
func ParseCUDAVersion(banner string) (string, error) {
	m := cudaBannerRE.FindStringSubmatch(banner)
	if m == nil {
		return "", errors.New(`nvidia-smi's banner has no "CUDA Version: <major>.<minor>"`)
	}
	return m[1], nil
}

// describeGPUs names the machine's GPUs in one line.
func describeGPUs(names []string) string {
	same := true
	for _, n := range names[1:] {
		same = same && n == names[0]
	}
	switch {
	case len(names) == 1:
		return names[0]
	case same:
		return fmt.Sprintf("%d x %s", len(names), names[0])
	default:
		return strings.Join(names, ", ")
	}
}

// output runs a command and returns its stdout; a failure includes stderr.
func output(ctx context.Context, ex Exec, dir, name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	err := ex.Run(ctx, Command{Dir: dir, Name: name, Args: args, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("%s: %w: %s", FormatCommand(append([]string{name}, args...)), err, clipText(msg))
		}
		return "", fmt.Errorf("%s: %w", FormatCommand(append([]string{name}, args...)), err)
	}
	return stdout.String(), nil
}
