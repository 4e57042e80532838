package smoke

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"time"

	"github.com/org/runpod-gpu/pkg/cudaver"
)

// Proof runs the CUDA smoke proof. Config says what to check; the function fields are the
// proof's view of the outside world, so tests replace them. Nil fields take the defaults noted.
type Proof struct {
	Config Config
	// OpenDriver loads the CUDA driver library (in production cudalib.OpenDriver("libcuda.so.1")).
	OpenDriver func() (Driver, error)
	// OpenNVRTC loads the NVRTC library at a full path (in production cudalib.OpenNVRTC).
	// Needed only when the selected tier has an NVRTC pin.
	OpenNVRTC func(libPath string) (NVRTC, error)
	// InstallerFor picks the installer for a package URL; nil means the package's InstallerFor.
	InstallerFor func(packageURL string) (Installer, error)
	// Fetch fetches NVRTC packages; nil means CurlFetch.
	Fetch Fetcher
	// Getenv reads the proof's environment; nil means os.Getenv.
	Getenv func(string) string
	// Out receives one line per step and the verdict; nil means io.Discard.
	Out io.Writer
	// Now is the clock for step durations; nil means time.Now.
	Now func() time.Time
	// KernelInput draws the magic kernel's input; nil means a random value per launch, so a
	// driver that replays a fixed answer fails.
	KernelInput func() uint32
}

// deviceOrdinal is the device proven. RunPod pods of this suite are single-GPU candidates.
const deviceOrdinal = 0

// Run performs the proof: each step prints a line to Out, the JSON report is written, and the
// last line is "SMOKE PASS" or "SMOKE FAIL: <reason>". The returned error is nil exactly when
// the proof passed; failures are *StepError wrapping the sentinel errors of this package.
//
// The calling goroutine is locked to its OS thread for the run, because the driver keeps the
// current context per thread and a goroutine moved between threads would lose it mid-proof.
func (p *Proof) Run(ctx context.Context) (*Report, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := &proofRun{p: p, out: p.Out, now: p.Now, report: &Report{}}
	if r.out == nil {
		r.out = io.Discard
	}
	if r.now == nil {
		r.now = time.Now
	}
	start := r.now()
	err := r.prove(ctx)
	r.report.DurationMS = milliseconds(r.now().Sub(start))
	if err == nil {
		r.report.Result = "pass"
	} else {
		r.report.Result, r.report.Reason = "fail", oneLine(err.Error())
	}
	if path := p.Config.ReportPath; path != "" {
		if werr := writeReport(path, r.report); werr != nil {
			fmt.Fprintf(r.out, "[FAIL] report: %s\n", oneLine(werr.Error()))
			if err == nil {
				err = &StepError{Step: "report", Err: werr}
			}
		}
	}
	WriteVerdict(r.out, err)
	return r.report, err
}

// proofRun is the state of one Run.
type proofRun struct {
	p      *Proof
	out    io.Writer
	now    func() time.Time
	report *Report

	drv    Driver
	driver Version
	tier   Tier
	device Device
	cc     ComputeCapability
}

// step runs one named step, records it and prints its line. A failure comes back as *StepError.
func (r *proofRun) step(ctx context.Context, name string, fn func() (string, error)) error {
	start := r.now()
	detail, err := "", ctx.Err()
	if err == nil {
		detail, err = fn()
	}
	elapsed := r.now().Sub(start)
	rec := StepReport{Name: name, OK: err == nil, Detail: oneLine(detail), DurationMS: milliseconds(elapsed)}
	if err != nil {
		rec.Detail = oneLine(err.Error())
	}
	r.report.Steps = append(r.report.Steps, rec)
	status := "ok"
	if err != nil {
		status = "FAIL"
	}
	fmt.Fprintf(r.out, "[%s] %s: %s (%.3f ms)\n", status, name, rec.Detail, rec.DurationMS)
	if err != nil {
		return &StepError{Step: name, Err: err}
	}
	return nil
}

// namedStep is one step of the proof: its name in the report and what it runs.
type namedStep struct {
	name string
	fn   func() (string, error)
}

// steps runs steps in order with step, stopping at the first that fails.
func (r *proofRun) steps(ctx context.Context, steps []namedStep) error {
	for _, s := range steps {
		if err := r.step(ctx, s.name, s.fn); err != nil {
			return err
		}
	}
	return nil
}

func (r *proofRun) getenv(key string) string {
	if r.p.Getenv == nil {
		return os.Getenv(key)
	}
	return r.p.Getenv(key)
}

func (r *proofRun) prove(ctx context.Context) (err error) {
	cfg := r.p.Config
	if err := r.steps(ctx, []namedStep{
		{"environment", r.checkEnvironment},
		{"load-driver", r.loadDriver},
		{"driver-version", r.checkDriverVersion},
		{"tier", r.selectTier},
		{"device", r.inspectDevice},
		{"vram", r.checkVRAM},
	}); err != nil {
		return err
	}

	if err := r.step(ctx, "context", r.createContext); err != nil {
		return err
	}
	// Release on every path from here: the primary context holds the device's memory and
	// modules, and the driver destroys it with the last release.
	defer func() {
		releaseErr := r.step(context.WithoutCancel(ctx), "context-release", func() (string, error) {
			if err := r.drv.PrimaryCtxRelease(r.device); err != nil {
				return "", err
			}
			return "primary context released", nil
		})
		if err == nil {
			err = releaseErr
		}
	}()

	if err := r.step(ctx, "ptx-kernel", r.runTierPTX); err != nil {
		return err
	}
	if pin, ok := cfg.NVRTC[r.tier.Name]; ok {
		return r.proveNVRTC(ctx, pin)
	}
	return nil
}

func (r *proofRun) checkEnvironment() (string, error) {
	if r.getenv("RUNNER_JIT_CONFIG") != "" {
		return "", ErrJITConfigPresent
	}
	return "RUNNER_JIT_CONFIG absent", nil
}

func (r *proofRun) loadDriver() (string, error) {
	if r.p.OpenDriver == nil {
		return "", fmt.Errorf("%w: no CUDA driver loader configured", ErrLibraryMissing)
	}
	drv, err := r.p.OpenDriver()
	if err != nil {
		return "", err
	}
	r.drv = drv
	return "CUDA driver library loaded", nil
}

func (r *proofRun) checkDriverVersion() (string, error) {
	if err := r.drv.Init(); err != nil {
		return "", err
	}
	code, err := r.drv.DriverGetVersion()
	if err != nil {
		return "", err
	}
	v, err := cudaver.FromCode(code)
	if err != nil {
		return "", err
	}
	r.driver = v
	r.report.DriverVersion, r.report.DriverVersionCode = v, code
	if floor := r.p.Config.MinCUDA; !v.AtLeast(floor) {
		return "", fmt.Errorf("%w: driver supports CUDA %s (%d), floor is %s", ErrDriverBelowFloor, v, code, floor)
	}
	return fmt.Sprintf("driver supports CUDA %s (%d), floor %s", v, code, r.p.Config.MinCUDA), nil
}

func (r *proofRun) selectTier() (string, error) {
	tier, err := r.p.Config.Tiers.Select(r.driver)
	if err != nil {
		return "", err
	}
	r.tier = tier
	r.report.Tier, r.report.TierCUDA, r.report.PTXISA = tier.Name, tier.CUDA, tier.PTX
	return fmt.Sprintf("%s (CUDA %s, PTX ISA %s) for driver CUDA %s", tier.Name, tier.CUDA, tier.PTX, r.driver), nil
}

func (r *proofRun) inspectDevice() (string, error) {
	dev, err := r.drv.DeviceGet(deviceOrdinal)
	if err != nil {
		return "", err
	}
	r.device = dev
	name, err := r.drv.DeviceGetName(dev)
	if err != nil {
		return "", err
	}
	major, err := r.drv.DeviceGetAttribute(AttrComputeCapabilityMajor, dev)
	if err != nil {
		return "", err
	}
	minor, err := r.drv.DeviceGetAttribute(AttrComputeCapabilityMinor, dev)
	if err != nil {
		return "", err
	}
	vram, err := r.drv.DeviceTotalMem(dev)
	if err != nil {
		return "", err
	}
	r.cc = ComputeCapability{Major: major, Minor: minor}
	r.report.Device = &DeviceReport{Ordinal: deviceOrdinal, Name: oneLine(name), ComputeCapability: r.cc,
		VRAMBytes: vram, MinVRAMBytes: r.p.Config.MinVRAMBytes}
	return fmt.Sprintf("device %d %q, compute capability %s, %s", deviceOrdinal, oneLine(name), r.cc, formatGB(vram)), nil
}

func (r *proofRun) checkVRAM() (string, error) {
	have, need := r.report.Device.VRAMBytes, r.p.Config.MinVRAMBytes
	if have < need {
		return "", fmt.Errorf("%w: device has %s, minimum is %s", ErrVRAMBelowMinimum, formatGB(have), formatGB(need))
	}
	return fmt.Sprintf("%s >= minimum %s", formatGB(have), formatGB(need)), nil
}

func (r *proofRun) createContext() (string, error) {
	ctx, err := r.drv.PrimaryCtxRetain(r.device)
	if err != nil {
		return "", err
	}
	if err := r.drv.CtxSetCurrent(ctx); err != nil {
		// Retained but unusable: release now, since the deferred release is not yet armed.
		return "", errors.Join(err, r.drv.PrimaryCtxRelease(r.device))
	}
	return "primary context retained and current", nil
}

func (r *proofRun) runTierPTX() (string, error) {
	target, err := PTXTarget(r.cc, r.tier.PTX)
	if err != nil {
		return "", err
	}
	r.report.PTXTarget = target.SM()
	detail, err := r.runKernel(KernelPTX(r.tier.PTX, target), fmt.Sprintf("PTX ISA %s .target %s", r.tier.PTX, target.SM()))
	if err != nil {
		return "", err
	}
	return detail, nil
}

// runKernel loads ptx (described by what), launches the magic kernel on a fresh input and
// checks the value read back.
func (r *proofRun) runKernel(ptx, what string) (string, error) {
	mod, err := r.drv.ModuleLoadData(ptx)
	if err != nil {
		return "", fmt.Errorf("driver rejected %s: %w", what, err)
	}
	fn, err := r.drv.ModuleGetFunction(mod, KernelName)
	if err != nil {
		return "", err
	}
	buf, err := r.drv.MemAlloc(4)
	if err != nil {
		return "", err
	}
	input := rand.Uint32()
	if r.p.KernelInput != nil {
		input = r.p.KernelInput()
	}
	one := Dim3{1, 1, 1}
	if err := r.drv.LaunchKernel(fn, one, one, buf, input); err != nil {
		return "", err
	}
	if err := r.drv.CtxSynchronize(); err != nil {
		return "", err
	}
	var out [4]byte
	if err := r.drv.MemcpyDtoH(out[:], buf); err != nil {
		return "", err
	}
	// The device writes the uint32 in the host's byte order (little-endian on every CUDA host).
	got, want := binary.NativeEndian.Uint32(out[:]), ExpectedReadBack(input)
	if got != want {
		return "", fmt.Errorf("%w: %s(0x%08x) read back 0x%08x, want 0x%08x", ErrReadBackMismatch, KernelName, input, got, want)
	}
	return fmt.Sprintf("%s: %s(0x%08x) read back 0x%08x as expected", what, KernelName, input, got), nil
}

// proveNVRTC downloads, verifies, unpacks and loads the tier's pinned NVRTC, compiles the magic
// kernel for this device and runs it.
func (r *proofRun) proveNVRTC(ctx context.Context, pin NVRTCPin) error {
	n := &nvrtcProof{r: r, pin: pin, rep: &NVRTCReport{PackageURL: pin.URL, PackageSHA256: pin.SHA256}}
	r.report.NVRTC = n.rep
	// Everything fetched or unpacked lives in one private directory, removed when the proof
	// ends; the loaded library stays mapped until the process exits.
	defer func() {
		if n.workDir != "" {
			os.RemoveAll(n.workDir)
		}
	}()
	return r.steps(ctx, []namedStep{
		{"nvrtc-download", func() (string, error) { return n.download(ctx) }},
		{"nvrtc-install", func() (string, error) { return n.install(ctx) }},
		{"nvrtc-load", n.load},
		{"nvrtc-version", n.checkVersion},
		{"nvrtc-compile", n.compile},
		{"nvrtc-kernel", n.runKernel},
	})
}

// nvrtcProof is the NVRTC part of one proof: what each of its steps hands the next.
type nvrtcProof struct {
	r   *proofRun
	pin NVRTCPin
	rep *NVRTCReport
	// workDir is the private directory, archive the package downloaded into it
	// and libPath the library unpacked from it.
	workDir, archive, libPath string
	nvrtc                     NVRTC
	ptx                       string
}

// download fetches the pinned package into a new private directory and verifies its SHA-256.
func (n *nvrtcProof) download(ctx context.Context) (string, error) {
	var err error
	if n.workDir, err = os.MkdirTemp(n.r.p.Config.WorkDir, "cuda-smoke-"); err != nil {
		return "", err
	}
	n.archive = filepath.Join(n.workDir, packageFileName(n.pin.URL))
	fetch := n.r.p.Fetch
	if fetch == nil {
		fetch = CurlFetch
	}
	size, err := Download(ctx, fetch, n.pin, n.archive)
	if err != nil {
		return "", err
	}
	n.rep.PackageBytes = size
	return fmt.Sprintf("%s: %d bytes, sha256 %s verified", n.pin.URL, size, n.pin.SHA256), nil
}

// install unpacks the package with the installer its URL calls for and finds the library.
func (n *nvrtcProof) install(ctx context.Context) (string, error) {
	pick := n.r.p.InstallerFor
	if pick == nil {
		pick = InstallerFor
	}
	inst, err := pick(n.pin.URL)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(n.workDir, "nvrtc")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	if err := inst.Install(ctx, n.archive, dir); err != nil {
		return "", err
	}
	if n.libPath, err = FindNVRTCLibrary(dir, n.r.tier.CUDA.Major); err != nil {
		return "", err
	}
	rel, _ := filepath.Rel(dir, n.libPath)
	return fmt.Sprintf("unpacked into a private directory; using %s", rel), nil
}

// load loads the unpacked library.
func (n *nvrtcProof) load() (string, error) {
	if n.r.p.OpenNVRTC == nil {
		return "", fmt.Errorf("%w: no NVRTC loader configured", ErrLibraryMissing)
	}
	var err error
	n.nvrtc, err = n.r.p.OpenNVRTC(n.libPath)
	if err != nil {
		return "", err
	}
	return filepath.Base(n.libPath) + " loaded", nil
}

// checkVersion checks that NVRTC is at least the tier's CUDA and at most the driver's.
func (n *nvrtcProof) checkVersion() (string, error) {
	r := n.r
	v, err := n.nvrtc.Version()
	if err != nil {
		return "", err
	}
	n.rep.Version = v
	switch {
	case !v.AtLeast(r.tier.CUDA):
		return "", fmt.Errorf("%w: NVRTC %s is older than the %s tier's CUDA %s", ErrNVRTCTooOld, v, r.tier.Name, r.tier.CUDA)
	case !r.driver.AtLeast(v):
		return "", fmt.Errorf("%w: NVRTC %s emits PTX that driver CUDA %s cannot load", ErrNVRTCNewerThanDriver, v, r.driver)
	}
	return fmt.Sprintf("NVRTC %s: at least tier %s, at most driver %s", v, r.tier.CUDA, r.driver), nil
}

// compile compiles the magic kernel for this device with the newest PTX ISA
// NVRTC's version is known to emit, and reads back the PTX header.
func (n *nvrtcProof) compile() (string, error) {
	rep := n.rep
	isa, ok := newestPTXISAUpTo(rep.Version)
	if !ok {
		isa = n.r.tier.PTX
	}
	arch, err := PTXTarget(n.r.cc, isa)
	if err != nil {
		return "", err
	}
	rep.Architecture = arch.Compute()
	if n.ptx, err = n.nvrtc.Compile(KernelSource, KernelName+".cu", []string{"--gpu-architecture=" + arch.Compute()}); err != nil {
		return "", err
	}
	header, err := ParsePTXHeader(n.ptx)
	if err != nil {
		return "", fmt.Errorf("NVRTC output: %w", err)
	}
	rep.PTXISA, rep.PTXTarget = header.ISA, header.Target
	return fmt.Sprintf("%s for %s: PTX ISA %s .target %s, %d bytes", KernelName, arch.Compute(), header.ISA, header.Target, len(n.ptx)), nil
}

// runKernel runs the compiled kernel on the device.
func (n *nvrtcProof) runKernel() (string, error) {
	return n.r.runKernel(n.ptx, fmt.Sprintf("NVRTC PTX ISA %s .target %s", n.rep.PTXISA, n.rep.PTXTarget))
}

// packageFileName keeps the URL's file name (its suffix picks the installer) and falls back
// to a fixed name for URLs without one.
func packageFileName(packageURL string) string {
	if u, err := url.Parse(packageURL); err == nil {
		if name := path.Base(u.Path); name != "." && name != ".." && name != "/" {
			return name
		}
	}
	return "nvrtc-package"
}
