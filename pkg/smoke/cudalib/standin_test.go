package cudalib_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/smoke/cudalib"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

// The stand-ins are built once per test binary; every scenario reconfigures the driver through
// SIM_CUDA_* variables, which it rereads at each cuInit.
var (
	buildDir   string
	driverOnce sync.Once
	driverPath string
	driverErr  error
	nvrtcMu    sync.Mutex
	nvrtcPkgs  = map[smoke.Version][]byte{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cudalib-test-")
	if err != nil {
		panic(err)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	if err == smoketest.ErrNoCompiler {
		tb.Skipf("skipping: %v", err)
	}
	tb.Fatal(err)
}

// standInDriver returns the path of the libcuda.so.1 stand-in.
func standInDriver(tb testing.TB) string {
	tb.Helper()
	driverOnce.Do(func() {
		dir := filepath.Join(buildDir, "driver")
		if driverErr = os.Mkdir(dir, 0o755); driverErr == nil {
			driverPath, driverErr = smoketest.BuildStandInDriver(dir)
		}
	})
	if driverErr != nil {
		skipOrFail(tb, driverErr)
	}
	return driverPath
}

// nvrtcPackage returns the bytes of an NVRTC stand-in package of version.
func nvrtcPackage(tb testing.TB, version smoke.Version) []byte {
	tb.Helper()
	nvrtcMu.Lock()
	defer nvrtcMu.Unlock()
	if pkg, ok := nvrtcPkgs[version]; ok {
		return pkg
	}
	dir, err := os.MkdirTemp(buildDir, "nvrtc-")
	assert.NilError(tb, err)
	path, err := smoketest.BuildNVRTCPackage(dir, version)
	if err != nil {
		skipOrFail(tb, err)
	}
	pkg, err := os.ReadFile(path)
	assert.NilError(tb, err)
	nvrtcPkgs[version] = pkg
	return pkg
}

// configureStandIn sets the stand-in's environment for one test: cfg's variables, every other
// SIM_CUDA_* cleared, and a fresh call log whose path it returns.
func configureStandIn(t *testing.T, cfg smoketest.DriverConfig) (callLog string) {
	t.Helper()
	cfg.CallLog = filepath.Join(t.TempDir(), "calls.log")
	for _, name := range smoketest.EnvNames {
		t.Setenv(name, "")
	}
	for _, kv := range cfg.Env() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	return cfg.CallLog
}

func mustVersion(tb testing.TB, s string) smoke.Version {
	tb.Helper()
	v, err := cudaver.Parse(s)
	assert.NilError(tb, err)
	return v
}

// installRecorder counts installs, to prove that a rejected package is never installed.
type installRecorder struct{ installs int }

func (r *installRecorder) pick(url string) (smoke.Installer, error) {
	inner, err := smoke.InstallerFor(url)
	if err != nil {
		return nil, err
	}
	return installFunc(func(ctx context.Context, archive, dir string) error {
		r.installs++
		return inner.Install(ctx, archive, dir)
	}), nil
}

type installFunc func(ctx context.Context, archive, dir string) error

func (f installFunc) Install(ctx context.Context, archive, dir string) error {
	return f(ctx, archive, dir)
}

func TestProofAgainstStandIn(t *testing.T) {
	noKernelWork := []string{"cuDevicePrimaryCtxRetain", "cuModuleLoadData", "cuMemAlloc_v2", "cuLaunchKernel"}
	tests := []struct {
		name       string
		driver     smoketest.DriverConfig
		args       []string
		nvrtc      string // version of the NVRTC package served for both tiers
		badSHA     bool
		missingLib bool
		wantErr    error
		wantFail   string // substring of the SMOKE FAIL line
		wantTier   smoke.TierName
		wantPTX    string // "ISA target" of the tier's PTX
		wantCalls  []string
		noCalls    []string
		installs   int
	}{
		{name: "12.8 driver passes the full tier", driver: smoketest.DriverConfig{DriverVersion: 12080},
			wantTier: smoke.TierFull, wantPTX: "8.7 sm_89",
			wantCalls: []string{"cuInit", "cuDriverGetVersion", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute",
				"cuDeviceGetAttribute", "cuDeviceTotalMem_v2", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuModuleLoadData",
				"cuModuleGetFunction", "cuMemAlloc_v2", "cuLaunchKernel", "cuCtxSynchronize", "cuMemcpyDtoH_v2",
				"cuDevicePrimaryCtxRelease_v2"}},
		{name: "driver below the floor", driver: smoketest.DriverConfig{DriverVersion: 12040},
			wantErr: smoke.ErrDriverBelowFloor, wantFail: "driver supports CUDA 12.4 (12040), floor is 12.6", noCalls: noKernelWork},
		{name: "tier 12.4 fails under a lower floor", driver: smoketest.DriverConfig{DriverVersion: 12040}, args: []string{"--min-cuda", "12.0"},
			wantErr: smoke.ErrNoRuntimeTier, wantFail: "driver CUDA 12.4 is below baseline 12.6", noCalls: noKernelWork},
		{name: "tier 12.6 is baseline", driver: smoketest.DriverConfig{DriverVersion: 12060}, wantTier: smoke.TierBaseline, wantPTX: "8.5 sm_89"},
		{name: "tier 12.7 is baseline", driver: smoketest.DriverConfig{DriverVersion: 12070}, wantTier: smoke.TierBaseline, wantPTX: "8.5 sm_89"},
		{name: "tier 12.8 is full", driver: smoketest.DriverConfig{DriverVersion: 12080}, wantTier: smoke.TierFull, wantPTX: "8.7 sm_89"},
		{name: "tier 13.0 is full", driver: smoketest.DriverConfig{DriverVersion: 13000}, wantTier: smoke.TierFull, wantPTX: "8.7 sm_89"},
		{name: "driver refuses the tier's PTX ISA", driver: smoketest.DriverConfig{DriverVersion: 12080, MaxPTXISA: "8.5"},
			wantErr:  smoke.ErrorUnsupportedPTXVersion,
			wantFail: "driver rejected PTX ISA 8.7 .target sm_89: cuModuleLoadData: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): the provided PTX was compiled with an unsupported toolchain.",
			noCalls:  []string{"cuLaunchKernel"}},
		{name: "RTX 5090 on a 12.6 driver runs capped sm_90 PTX", driver: smoketest.DriverConfig{DriverVersion: 12060, ComputeCapability: "12.0"},
			wantTier: smoke.TierBaseline, wantPTX: "8.5 sm_90"},
		{name: "wrong read-back", driver: smoketest.DriverConfig{ReadBack: "wrong"}, wantErr: smoke.ErrReadBackMismatch, wantFail: "kernel read-back mismatch"},
		{name: "kernel that writes nothing", driver: smoketest.DriverConfig{ReadBack: "zero"}, wantErr: smoke.ErrReadBackMismatch, wantFail: "read back 0x00000000"},
		{name: "VRAM below the minimum launches nothing", driver: smoketest.DriverConfig{VRAMMiB: 4096},
			wantErr: smoke.ErrVRAMBelowMinimum, wantFail: "device has 4.29 GB (4.00 GiB), minimum is 8.00 GB", noCalls: noKernelWork},
		{name: "asynchronous launch failure", driver: smoketest.DriverConfig{Fail: "cuCtxSynchronize:700"},
			wantErr: smoke.ErrorIllegalAddress, wantFail: "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered"},
		{name: "no device", driver: smoketest.DriverConfig{NoDevice: true}, wantErr: smoke.ErrorNoDevice, wantFail: "driver-version: cuInit: CUDA_ERROR_NO_DEVICE (100)"},
		{name: "malformed stand-in configuration", driver: smoketest.DriverConfig{ComputeCapability: "eight"},
			wantErr: smoke.ErrorInvalidValue, wantFail: "driver-version: cuInit: CUDA_ERROR_INVALID_VALUE (1)"},
		{name: "library missing", missingLib: true, wantErr: smoke.ErrLibraryMissing, wantFail: "load-driver: library not loadable:"},
		{name: "NVRTC compiles and runs", driver: smoketest.DriverConfig{DriverVersion: 12080}, nvrtc: "12.8",
			wantTier: smoke.TierFull, wantPTX: "8.7 sm_89", installs: 1,
			wantCalls: []string{"nvrtcVersion", "nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetPTXSize", "nvrtcGetPTX", "nvrtcDestroyProgram"}},
		{name: "NVRTC checksum mismatch installs nothing", driver: smoketest.DriverConfig{DriverVersion: 12080}, nvrtc: "12.8", badSHA: true,
			wantErr: smoke.ErrChecksumMismatch, wantFail: "nvrtc-download: NVRTC package checksum mismatch", installs: 0,
			noCalls: []string{"nvrtcVersion", "nvrtcCompileProgram"}},
		{name: "NVRTC newer than the driver", driver: smoketest.DriverConfig{DriverVersion: 12060}, nvrtc: "12.8", installs: 1,
			wantErr: smoke.ErrNVRTCNewerThanDriver, wantFail: "NVRTC 12.8 emits PTX that driver CUDA 12.6 cannot load",
			noCalls: []string{"nvrtcCompileProgram"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			libPath := standInDriver(t)
			callLog := configureStandIn(t, tt.driver)
			cfg, err := smoke.ParseConfig(tt.args, func(string) string { return "" })
			assert.NilError(t, err)
			cfg.WorkDir = t.TempDir()

			if tt.nvrtc != "" {
				pkg := nvrtcPackage(t, mustVersion(t, tt.nvrtc))
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(pkg) }))
				defer srv.Close()
				sha := sha256Hex(pkg)
				if tt.badSHA {
					sha = sha256Hex([]byte("tampered"))
				}
				for _, tier := range []smoke.TierName{smoke.TierFull, smoke.TierBaseline} {
					cfg.NVRTC[tier] = smoke.NVRTCPin{URL: srv.URL + "/cuda-nvrtc.tar.gz", SHA256: sha}
				}
			}

			var out bytes.Buffer
			proof := cudalib.NewProof(cfg, &out, func(string) string { return "" })
			if tt.missingLib {
				libPath = filepath.Join(t.TempDir(), "libcuda.so.1")
			}
			proof.OpenDriver = func() (smoke.Driver, error) { return cudalib.OpenDriver(libPath) }
			recorder := &installRecorder{}
			proof.InstallerFor = recorder.pick

			report, err := proof.Run(context.Background())
			last := lastLine(out.String())
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				assert.Assert(t, strings.HasPrefix(last, "SMOKE FAIL: ") && strings.Contains(last, tt.wantFail), "last line %q, want SMOKE FAIL containing %q", last, tt.wantFail)
			} else {
				assert.NilError(t, err, out.String())
				assert.Equal(t, last, "SMOKE PASS")
				assert.Equal(t, report.Tier, tt.wantTier)
				assert.Equal(t, report.PTXISA.String()+" "+report.PTXTarget, tt.wantPTX)
			}
			assert.Equal(t, recorder.installs, tt.installs)

			calls, err := smoketest.ReadCallLog(callLog)
			assert.NilError(t, err)
			if tt.wantCalls != nil {
				assert.Assert(t, containsInOrder(calls, tt.wantCalls), "calls %v, want in order %v", calls, tt.wantCalls)
			}
			for _, c := range tt.noCalls {
				assert.Assert(t, !slices.Contains(calls, c), "%s called: %v", c, calls)
			}
			// The primary context is released on every path that retained it.
			if slices.Contains(calls, "cuDevicePrimaryCtxRetain") {
				assert.Equal(t, calls[len(calls)-1], "cuDevicePrimaryCtxRelease_v2", "calls %v", calls)
			}
		})
	}
}

// containsInOrder reports whether want appears in calls as a subsequence.
func containsInOrder(calls, want []string) bool {
	i := 0
	for _, c := range calls {
		if i < len(want) && c == want[i] {
			i++
		}
	}
	return i == len(want)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestOpenDriverMissingSymbol(t *testing.T) {
	// Any library without the driver API will do; glibc's libm is on every host this runs on.
	_, err := cudalib.OpenDriver("libm.so.6")
	assert.ErrorIs(t, err, smoke.ErrSymbolMissing)
	assert.ErrorContains(t, err, "libm.so.6 has no cuInit")
}

func TestOpenNVRTCWithoutBuiltinsFailsToCompile(t *testing.T) {
	dir := t.TempDir()
	v := smoke.Version{Major: 12, Minor: 9} // a version no other test loads, so no builtins of it are resident
	lib, err := smoketest.BuildStandInNVRTC(dir, v)
	if err != nil {
		skipOrFail(t, err)
	}
	assert.NilError(t, os.Remove(filepath.Join(dir, "libnvrtc-builtins.so.12.9")))
	nvrtc, err := cudalib.OpenNVRTC(lib)
	assert.NilError(t, err)
	got, err := nvrtc.Version()
	assert.NilError(t, err)
	assert.Equal(t, got, v)
	_, err = nvrtc.Compile(smoke.KernelSource, "k.cu", []string{"--gpu-architecture=compute_89"})
	assert.ErrorContains(t, err, "nvrtcCompileProgram: nvrtcResult 7: NVRTC_ERROR_BUILTIN_OPERATION_FAILURE; log: nvrtc: error: failed to open libnvrtc-builtins.so.12.9")
}

// TestContextIsPerThread shows why Proof.Run locks its OS thread: a context made current on one
// thread is not current on another.
func TestContextIsPerThread(t *testing.T) {
	drv, err := cudalib.OpenDriver(standInDriver(t))
	assert.NilError(t, err)
	configureStandIn(t, smoketest.DriverConfig{})

	onThread := func(fn func() error) error {
		errc := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine, taking its state
			errc <- fn()
		}()
		return <-errc
	}
	var ctx smoke.Context
	assert.NilError(t, onThread(func() error {
		if err := drv.Init(); err != nil {
			return err
		}
		var err error
		if ctx, err = drv.PrimaryCtxRetain(0); err != nil {
			return err
		}
		if err := drv.CtxSetCurrent(ctx); err != nil {
			return err
		}
		_, err = drv.MemAlloc(4)
		return err
	}))
	err = onThread(func() error { _, err := drv.MemAlloc(4); return err })
	assert.ErrorIs(t, err, smoke.ErrorInvalidContext)
	assert.NilError(t, drv.PrimaryCtxRelease(0))
}

func BenchmarkProof(b *testing.B) {
	libPath := standInDriver(b)
	for _, name := range smoketest.EnvNames {
		b.Setenv(name, "")
	}
	cfg, err := smoke.ParseConfig(nil, func(string) string { return "" })
	assert.NilError(b, err)
	proof := cudalib.NewProof(cfg, io.Discard, func(string) string { return "" })
	proof.OpenDriver = func() (smoke.Driver, error) { return cudalib.OpenDriver(libPath) }
	for b.Loop() {
		if _, err := proof.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
