package smoketest_test

import (
	"archive/tar"
	"compress/gzip"
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

func soname(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	assert.NilError(t, err)
	defer f.Close()
	names, err := f.DynString(elf.DT_SONAME)
	assert.NilError(t, err)
	assert.Equal(t, len(names), 1)
	return names[0]
}

func TestBuildStandInDriver(t *testing.T) {
	dir := smoketest.RequireStandInDriver(t)
	assert.Equal(t, soname(t, filepath.Join(dir, "libcuda.so.1")), "libcuda.so.1")
}

func TestBuildNVRTCPackage(t *testing.T) {
	archive := smoketest.RequireNVRTCPackage(t, smoke.Version{Major: 12, Minor: 6})
	f, err := os.Open(archive)
	assert.NilError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	assert.NilError(t, err)
	tr := tar.NewReader(gz)
	got := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		got[hdr.Name] = hdr.Linkname
	}
	lib := "./usr/local/cuda-12.6/targets/x86_64-linux/lib/"
	assert.DeepEqual(t, got, map[string]string{
		lib:                                 "",
		lib + "libnvrtc.so.12.6.0":          "",
		lib + "libnvrtc.so.12":              "libnvrtc.so.12.6.0",
		lib + "libnvrtc-builtins.so.12.6.0": "",
		lib + "libnvrtc-builtins.so.12.6":   "libnvrtc-builtins.so.12.6.0",
	})
}

func TestDriverConfigEnv(t *testing.T) {
	tests := []struct {
		name string
		cfg  smoketest.DriverConfig
		want []string
	}{
		{name: "defaults set nothing"},
		{name: "every field", cfg: smoketest.DriverConfig{DriverVersion: 12060, MaxPTXISA: "8.5", ComputeCapability: "9.0", VRAMMiB: 81559,
			DeviceName: "NVIDIA H100 80GB HBM3", DeviceCount: 2, ReadBack: "wrong", Fail: "cuInit:999", CallLog: "/tmp/calls"},
			want: []string{"SIM_CUDA_DRIVER_VERSION=12060", "SIM_CUDA_MAX_PTX_ISA=8.5", "SIM_CUDA_CC=9.0", "SIM_CUDA_VRAM_MB=81559",
				"SIM_CUDA_DEVICE_NAME=NVIDIA H100 80GB HBM3", "SIM_CUDA_DEVICE_COUNT=2", "SIM_CUDA_READBACK=wrong",
				"SIM_CUDA_FAIL=cuInit:999", "SIM_CUDA_CALL_LOG=/tmp/calls"}},
		{name: "no device", cfg: smoketest.DriverConfig{NoDevice: true}, want: []string{"SIM_CUDA_DEVICE_COUNT=0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.DeepEqual(t, tt.cfg.Env(), tt.want)
		})
	}
}

func TestReadCallLog(t *testing.T) {
	dir := t.TempDir()
	calls, err := smoketest.ReadCallLog(filepath.Join(dir, "missing"))
	assert.NilError(t, err)
	assert.Equal(t, len(calls), 0)

	path := filepath.Join(dir, "calls.log")
	assert.NilError(t, os.WriteFile(path, []byte("cuInit\ncuDriverGetVersion\n"), 0o644))
	calls, err = smoketest.ReadCallLog(path)
	assert.NilError(t, err)
	assert.DeepEqual(t, calls, []string{"cuInit", "cuDriverGetVersion"})
}
