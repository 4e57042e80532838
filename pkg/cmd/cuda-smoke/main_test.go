package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/smoke/cudalib"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// buildBinary builds this command with CGO_ENABLED=0, as the release does.
func buildBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "cuda-smoke")
	cmd := exec.Command(goTool, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	assert.NilError(t, err, string(out))
	return bin
}

// TestBinary builds the real binary without cgo and runs it against the stand-in driver found
// through LD_LIBRARY_PATH, the way the startup script runs it on a pod.
func TestBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipping: the proof targets linux")
	}
	if testing.Short() {
		t.Skip("skipping in -short mode: builds the binary")
	}
	standIn := smoketest.RequireStandInDriver(t)
	bin := buildBinary(t)

	t.Run("links only the system C library", func(t *testing.T) {
		f, err := elf.Open(bin)
		assert.NilError(t, err)
		defer f.Close()
		libs, err := f.ImportedLibraries()
		assert.NilError(t, err)
		allowed := []string{"libc.so.6", "libdl.so.2", "libpthread.so.0"}
		for _, lib := range libs {
			assert.Assert(t, slices.Contains(allowed, lib), "binary needs %s; want only %v (libcuda is dlopen'ed)", lib, allowed)
		}
		assert.Assert(t, len(libs) > 0, "purego needs the dynamic loader; a static binary cannot dlopen")
	})

	noDriverDir := t.TempDir()
	_, err := cudalib.OpenDriver(cudalib.DriverLibrary)
	hostHasDriver := !errors.Is(err, smoke.ErrLibraryMissing)
	tests := []struct {
		name          string
		libDir        string
		env           []string
		wantCode      int
		wantLast      string
		needsNoDriver bool // the host's own libcuda.so.1 would be found instead
	}{
		{name: "pass", libDir: standIn, wantCode: 0, wantLast: "SMOKE PASS"},
		{name: "driver refuses the PTX", libDir: standIn, env: []string{"SIM_CUDA_MAX_PTX_ISA=8.5"}, wantCode: 1,
			wantLast: "SMOKE FAIL: ptx-kernel: driver rejected PTX ISA 8.7 .target sm_89: cuModuleLoadData: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the provided PTX was compiled with an unsupported toolchain."},
		{name: "JIT config not stripped", libDir: standIn, env: []string{"RUNNER_JIT_CONFIG=eyJzZWNyZXQiOjF9"}, wantCode: 1,
			wantLast: "SMOKE FAIL: environment: RUNNER_JIT_CONFIG is set; the proof must run without the runner's JIT config (env -u RUNNER_JIT_CONFIG)"},
		{name: "no driver library", libDir: noDriverDir, wantCode: 1,
			wantLast:      "SMOKE FAIL: load-driver: library not loadable: libcuda.so.1: libcuda.so.1: cannot open shared object file: No such file or directory",
			needsNoDriver: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.needsNoDriver && hostHasDriver {
				t.Skip("skipping: this host has a real libcuda.so.1")
			}
			report := filepath.Join(t.TempDir(), "report.json")
			cmd := exec.Command(bin, "--report", report, "--min-vram-gb", "16")
			// A clean environment: nothing of the test process (a CI runner's variables included) leaks in.
			cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LD_LIBRARY_PATH=" + tt.libDir}, tt.env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			code := 0
			if exitErr := (*exec.ExitError)(nil); errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else {
				assert.NilError(t, err)
			}
			assert.Equal(t, code, tt.wantCode, out.String())
			assert.Equal(t, lastLine(out.String()), tt.wantLast)
			assert.Assert(t, !strings.Contains(out.String(), "eyJzZWNyZXQiOjF9"), "JIT config printed")

			var rep smoke.Report
			data, err := os.ReadFile(report)
			assert.NilError(t, err)
			assert.NilError(t, json.Unmarshal(data, &rep))
			assert.Equal(t, rep.Result == "pass", tt.wantCode == 0)
			if tt.wantCode == 0 {
				assert.Equal(t, rep.Device.Name, "NVIDIA GeForce RTX 4090")
				assert.Equal(t, rep.Device.ComputeCapability.String(), "8.9")
				assert.Equal(t, rep.Tier, smoke.TierFull)
			}
		})
	}
}
