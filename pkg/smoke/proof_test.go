package smoke_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	"gotest.tools/v3/golden"

	"github.com/org/runpod-gpu/pkg/smoke"
)

// stepClock advances one millisecond per reading, so durations in output are deterministic.
func stepClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// recordingInstaller wraps an installer and counts installs.
type recordingInstaller struct {
	inner    smoke.Installer
	installs int
}

func (r *recordingInstaller) Install(ctx context.Context, archive, dir string) error {
	r.installs++
	return r.inner.Install(ctx, archive, dir)
}

// nvrtcServer serves a tar package holding lib/libnvrtc.so.12 at /cuda-nvrtc.tar.
func nvrtcServer(t *testing.T) (srv *httptest.Server, sha string) {
	t.Helper()
	pkg := makeTar(t, false,
		tarEntry{name: "lib/", typ: tar.TypeDir},
		tarEntry{name: "lib/libnvrtc.so.12.8.93", body: "ELF", typ: tar.TypeReg},
		tarEntry{name: "lib/libnvrtc.so.12", link: "libnvrtc.so.12.8.93", typ: tar.TypeSymlink})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(pkg) }))
	t.Cleanup(srv.Close)
	return srv, sha256Hex(pkg)
}

// proofCase describes one scenario run against the fakes.
type proofCase struct {
	name      string
	driver    func(*fakeDriver)
	nvrtc     *smoke.Version // pin the selected tier's NVRTC package with this version
	badSHA    bool           // pin a checksum the package does not have
	cfg       func(*smoke.Config)
	env       map[string]string
	noLibrary bool
	wantErr   error
	golden    string
	check     func(t *testing.T, d *fakeDriver, inst *recordingInstaller)
}

func runProofCase(t *testing.T, tc proofCase) {
	drv := newFakeDriver()
	if tc.driver != nil {
		tc.driver(drv)
	}
	cfg, err := smoke.ParseConfig(nil, func(string) string { return "" })
	assert.NilError(t, err)
	cfg.ReportPath = filepath.Join(t.TempDir(), "report.json")
	cfg.WorkDir = t.TempDir()

	// Per-run values are replaced so the golden files stay stable.
	var stable []string
	if tc.nvrtc != nil {
		srv, sha := nvrtcServer(t)
		pinSHA := sha
		if tc.badSHA {
			pinSHA = sha256Hex([]byte("a different package"))
		}
		stable = append(stable, srv.URL, "http://nvrtc.test", sha, "<package sha256>", pinSHA, "<pinned sha256>")
		for _, tier := range []smoke.TierName{smoke.TierFull, smoke.TierBaseline} {
			cfg.NVRTC[tier] = smoke.NVRTCPin{URL: srv.URL + "/cuda-nvrtc.tar", SHA256: pinSHA}
		}
	}
	if tc.cfg != nil {
		tc.cfg(&cfg)
	}

	inst := &recordingInstaller{inner: smoke.TarInstaller{}}
	var out bytes.Buffer
	proof := &smoke.Proof{
		Config: cfg,
		OpenDriver: func() (smoke.Driver, error) {
			if tc.noLibrary {
				return nil, errors.Join(smoke.ErrLibraryMissing, errors.New("libcuda.so.1: cannot open shared object file: No such file or directory"))
			}
			return drv, nil
		},
		OpenNVRTC: func(libPath string) (smoke.NVRTC, error) {
			assert.Equal(t, filepath.Base(libPath), "libnvrtc.so.12")
			return &fakeNVRTC{version: *tc.nvrtc}, nil
		},
		InstallerFor: func(string) (smoke.Installer, error) { return inst, nil },
		Getenv:       func(k string) string { return tc.env[k] },
		Out:          &out,
		Now:          stepClock(),
		KernelInput:  func() uint32 { return 0x01020304 },
	}

	report, err := proof.Run(context.Background())
	if tc.wantErr == nil {
		assert.NilError(t, err)
		assert.Equal(t, report.Result, "pass")
	} else {
		assert.ErrorIs(t, err, tc.wantErr)
		assert.Equal(t, report.Result, "fail")
		assert.Equal(t, report.Reason, strings.TrimPrefix(lastLine(out.String()), "SMOKE FAIL: "))
	}
	written, err := os.ReadFile(cfg.ReportPath)
	assert.NilError(t, err)
	for key, value := range tc.env {
		assert.Assert(t, !strings.Contains(out.String()+string(written), value), "value of %s leaked", key)
	}

	if tc.golden != "" {
		golden.Assert(t, strings.NewReplacer(stable...).Replace(out.String()+"--- report\n"+string(written)), tc.golden)
	}
	if drv.called("PrimaryCtxRetain") && !drv.called("PrimaryCtxRelease") {
		t.Errorf("context retained but never released; calls %v", drv.calls)
	}
	if drv.failCall != "PrimaryCtxRelease" {
		assert.Equal(t, drv.retained, 0, "context left retained")
	}
	if tc.check != nil {
		tc.check(t, drv, inst)
	}
	entries, err := os.ReadDir(cfg.WorkDir)
	assert.NilError(t, err)
	assert.Equal(t, len(entries), 0, "work directory left behind")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestProof(t *testing.T) {
	v := func(major, minor int) *smoke.Version { return &smoke.Version{Major: major, Minor: minor} }
	noKernelWork := func(t *testing.T, d *fakeDriver, _ *recordingInstaller) {
		for _, call := range []string{"PrimaryCtxRetain", "ModuleLoadData", "MemAlloc", "LaunchKernel"} {
			assert.Assert(t, !d.called(call), "%s called; calls %v", call, d.calls)
		}
	}
	tests := []proofCase{
		{name: "pass full tier", golden: "proof-pass-full.golden"},
		{name: "pass baseline tier with NVRTC", driver: func(d *fakeDriver) { d.version, d.maxISA = 12060, smoke.ISA{Major: 8, Minor: 5} },
			nvrtc: v(12, 6), golden: "proof-pass-baseline-nvrtc.golden",
			check: func(t *testing.T, d *fakeDriver, inst *recordingInstaller) {
				assert.Equal(t, inst.installs, 1)
				assert.Equal(t, len(d.modules), 2, "tier PTX and NVRTC PTX both loaded")
			}},
		{name: "RTX 5090 under the baseline tier gets a capped target", driver: func(d *fakeDriver) {
			d.version, d.cc, d.maxISA = 12060, smoke.ComputeCapability{Major: 12}, smoke.ISA{Major: 8, Minor: 5}
		}, check: func(t *testing.T, d *fakeDriver, _ *recordingInstaller) {
			assert.Equal(t, d.modules[0].Target, "sm_90")
		}},
		{name: "JIT config present", env: map[string]string{"RUNNER_JIT_CONFIG": "c2VjcmV0"}, wantErr: smoke.ErrJITConfigPresent,
			golden: "proof-fail-jit-config.golden",
			check:  func(t *testing.T, d *fakeDriver, _ *recordingInstaller) { assert.Equal(t, len(d.calls), 0) }},
		{name: "library missing", noLibrary: true, wantErr: smoke.ErrLibraryMissing, golden: "proof-fail-library-missing.golden"},
		{name: "driver below floor", driver: func(d *fakeDriver) { d.version = 12040 }, wantErr: smoke.ErrDriverBelowFloor,
			golden: "proof-fail-driver-floor.golden", check: noKernelWork},
		{name: "no tier above a lower floor", driver: func(d *fakeDriver) { d.version = 12040 },
			cfg: func(c *smoke.Config) { c.MinCUDA = smoke.Version{Major: 12, Minor: 0} }, wantErr: smoke.ErrNoRuntimeTier, check: noKernelWork},
		{name: "VRAM below minimum", driver: func(d *fakeDriver) { d.vram = 4 << 30 }, wantErr: smoke.ErrVRAMBelowMinimum,
			golden: "proof-fail-vram.golden", check: noKernelWork},
		{name: "driver rejects the tier's PTX", driver: func(d *fakeDriver) { d.maxISA = smoke.ISA{Major: 8, Minor: 5} },
			wantErr: smoke.ErrorUnsupportedPTXVersion, golden: "proof-fail-ptx-version.golden"},
		{name: "wrong read-back", driver: func(d *fakeDriver) { d.readBack = func(v uint32) uint32 { return v + 1 } },
			wantErr: smoke.ErrReadBackMismatch, golden: "proof-fail-readback.golden"},
		{name: "zeros read back", driver: func(d *fakeDriver) { d.readBack = func(uint32) uint32 { return 0 } },
			wantErr: smoke.ErrReadBackMismatch},
		{name: "NVRTC checksum mismatch installs nothing", nvrtc: v(12, 8), badSHA: true, wantErr: smoke.ErrChecksumMismatch,
			golden: "proof-fail-nvrtc-checksum.golden",
			check:  func(t *testing.T, _ *fakeDriver, inst *recordingInstaller) { assert.Equal(t, inst.installs, 0) }},
		{name: "NVRTC newer than the driver", driver: func(d *fakeDriver) { d.version = 12060 }, nvrtc: v(12, 8),
			wantErr: smoke.ErrNVRTCNewerThanDriver, golden: "proof-fail-nvrtc-newer.golden"},
		{name: "NVRTC older than the tier", nvrtc: v(12, 6), wantErr: smoke.ErrNVRTCTooOld},
		{name: "failed context release fails a passing proof", driver: func(d *fakeDriver) {
			d.failCall, d.failWith = "PrimaryCtxRelease", smoke.ErrorInvalidContext
		}, wantErr: smoke.ErrorInvalidContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runProofCase(t, tc) })
	}
}

// TestProofReleasesContextOnEveryPath fails each driver call after the context exists and checks
// the context is released exactly once every time.
func TestProofReleasesContextOnEveryPath(t *testing.T) {
	for _, call := range []string{"CtxSetCurrent", "ModuleLoadData", "ModuleGetFunction", "MemAlloc", "LaunchKernel", "CtxSynchronize", "MemcpyDtoH"} {
		t.Run(call, func(t *testing.T) {
			runProofCase(t, proofCase{
				driver:  func(d *fakeDriver) { d.failCall, d.failWith = call, smoke.ErrorLaunchFailed },
				wantErr: smoke.ErrorLaunchFailed,
				check: func(t *testing.T, d *fakeDriver, _ *recordingInstaller) {
					released := 0
					for _, c := range d.calls {
						if c == "PrimaryCtxRelease" {
							released++
						}
					}
					assert.Equal(t, released, 1)
				},
			})
		})
	}
}

func TestProofStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	opened := false
	_, err := (&smoke.Proof{
		OpenDriver: func() (smoke.Driver, error) { opened = true; return newFakeDriver(), nil },
		Getenv:     func(string) string { return "" },
		Out:        &out,
	}).Run(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Assert(t, !opened)
	assert.Equal(t, lastLine(out.String()), "SMOKE FAIL: environment: context canceled")
}

func TestProofReportWriteFailureFails(t *testing.T) {
	var out bytes.Buffer
	cfg, err := smoke.ParseConfig(nil, func(string) string { return "" })
	assert.NilError(t, err)
	cfg.ReportPath = filepath.Join(t.TempDir(), "missing-dir", "report.json")
	_, err = (&smoke.Proof{
		Config:     cfg,
		OpenDriver: func() (smoke.Driver, error) { return newFakeDriver(), nil },
		Getenv:     func(string) string { return "" },
		Out:        &out,
	}).Run(context.Background())
	var stepErr *smoke.StepError
	assert.Assert(t, errors.As(err, &stepErr))
	assert.Equal(t, stepErr.Step, "report")
	assert.Assert(t, strings.HasPrefix(lastLine(out.String()), "SMOKE FAIL: report: "), out.String())
}

func TestProofDrawsFreshInputs(t *testing.T) {
	drv := newFakeDriver()
	var inputs []uint32
	drv.readBack = func(v uint32) uint32 { inputs = append(inputs, v-smoke.MagicAddend); return v }
	for range 2 {
		_, err := (&smoke.Proof{
			Config:     smoke.Config{MinCUDA: smoke.Version{Major: 12, Minor: 6}, Tiers: smoke.DefaultTiers},
			OpenDriver: func() (smoke.Driver, error) { return drv, nil },
			Getenv:     func(string) string { return "" },
		}).Run(context.Background())
		assert.NilError(t, err)
	}
	assert.Equal(t, len(inputs), 2)
	// Two random 32-bit draws collide with probability 2^-32.
	assert.Assert(t, inputs[0] != inputs[1], "the kernel input must change between runs")
}
