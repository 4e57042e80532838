package cloud

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

//go:embed standins
var standIns embed.FS

// ErrNoCommand is returned by (*ProcessHosts).Start for a pod created without
// entrypoint or cmd: there is no image to supply a default command.
var ErrNoCommand = errors.New("cloud: the pod has no entrypoint or cmd to run")

// stopGrace is how long a stopped container has between SIGTERM (the stand-in
// runner disconnects on it) and SIGKILL.
const stopGrace = 2 * time.Second

// maxLogBytes bounds what is kept of one pod's output.
const maxLogBytes = 1 << 20

// ProcessHosts is the process-mode HostRunner: each pod's container is a real
// child process, Launch.Entrypoint + Launch.Cmd (the rendered startup script
// under /bin/bash -c), in its own process group and a private directory (its
// cwd, HOME and TMPDIR). The "machine" around it is made of stand-ins, first
// on PATH: nvidia-smi, sudo and id (the runner image's non-root user with
// passwordless sudo), setpriv (dropping to that user under no_new_privs,
// which the sudo stand-in then refuses, as sudo does) and chown, a runner
// directory whose run.sh connects to the simulated GitHub with the JIT config
// from ACTIONS_RUNNER_INPUT_JITCONFIG, and the CUDA driver stand-in
// (libcuda.so.1 on LD_LIBRARY_PATH) configured from the host profile.
// curl and wget are wrappers that record every download a pod makes
// (Downloads) before running the host's own. An image that carries files
// (AddImage, such as the suite's default pod image with the proof) shows
// them to its pods at ImagePath.
//
// Real processes cannot follow virtual time: use ProcessHosts only with the
// real clock (cloud.ModeProcess does).
type ProcessHosts struct {
	root, binDir, libDir, runnerDir, workDir, podsDir string
	imagesDir, downloadsDir                           string
	hostPath                                          string
	// realDownloaders are the host's curl and wget, which the download
	// stand-ins run after recording the call; a program the host lacks is
	// not placed, as an image without it.
	realDownloaders map[string]string
	// images are the files an image carries beyond the stand-in machine
	// (image → its path → content), by AddImage.
	images map[string]map[string][]byte

	mu      sync.Mutex
	running map[string]*container // pod id → its live container
	logs    map[string]*podLog    // pod id → output of every start, kept after exit
	closed  bool
	wg      sync.WaitGroup
}

// container is one started pod process.
type container struct {
	cmd     *exec.Cmd
	stopped bool          // Stop was called: its exit is not reported
	done    chan struct{} // closed once the process is reaped
}

// podLog is a pod's combined stdout and stderr, bounded.
type podLog struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	truncated bool
}

func (l *podLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := maxLogBytes - l.buf.Len(); len(p) > room {
		l.buf.Write(p[:max(room, 0)])
		l.truncated = true
		return len(p), nil
	}
	return l.buf.Write(p)
}

// lineWriter hands each complete line written to it to emit (the lines of
// one write together), keeping a partial last line for the next write.
type lineWriter struct {
	emit    runpodsim.LogFunc
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	var lines []string
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, strings.TrimRight(string(w.partial[:i]), "\r"))
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) > maxLogBytes { // a line that never ends is kept short
		lines, w.partial = append(lines, string(w.partial)), nil
	}
	w.emit(lines...)
	return len(p), nil
}

func (l *podLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.truncated {
		return l.buf.String() + "\n[log truncated]\n"
	}
	return l.buf.String()
}

// NewProcessHosts lays out the stand-in machine in a new temporary directory
// under parent ("" means the system's) and builds the CUDA driver stand-in,
// which needs gcc: without it the error wraps smoketest.ErrNoCompiler. Close
// removes everything.
func NewProcessHosts(parent string) (*ProcessHosts, error) {
	root, err := os.MkdirTemp(parent, "runpod-gpu-hosts-")
	if err != nil {
		return nil, fmt.Errorf("process hosts: %w", err)
	}
	h := &ProcessHosts{
		root: root, binDir: filepath.Join(root, "bin"), libDir: filepath.Join(root, "lib"),
		runnerDir: filepath.Join(root, "runner"), workDir: filepath.Join(root, "work"), podsDir: filepath.Join(root, "pods"),
		imagesDir: filepath.Join(root, "images"), downloadsDir: filepath.Join(root, "downloads"),
		hostPath: os.Getenv("PATH"),
		running:  map[string]*container{}, logs: map[string]*podLog{},
		realDownloaders: map[string]string{}, images: map[string]map[string][]byte{},
	}
	if h.hostPath == "" {
		h.hostPath = "/usr/local/bin:/usr/bin:/bin"
	}
	if err := h.layOut(); err != nil {
		os.RemoveAll(root)
		return nil, fmt.Errorf("process hosts: %w", err)
	}
	return h, nil
}

func (h *ProcessHosts) layOut() error {
	for _, d := range []string{h.binDir, h.libDir, h.runnerDir, h.workDir, h.podsDir, h.imagesDir, h.downloadsDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	wrapper, err := fs.ReadFile(standIns, "standins/download")
	if err != nil {
		return err
	}
	for _, name := range []string{"curl", "wget"} {
		real, err := lookPath(name, h.hostPath)
		if err != nil {
			continue
		}
		h.realDownloaders[name] = real
		if err := os.WriteFile(filepath.Join(h.binDir, name), wrapper, 0o755); err != nil {
			return err
		}
	}
	placed := map[string]string{"run.sh": h.runnerDir, "nvidia-smi": h.binDir, "sudo": h.binDir, "id": h.binDir,
		"setpriv": h.binDir, "chown": h.binDir}
	for name, dir := range placed {
		script, err := fs.ReadFile(standIns, "standins/"+name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), script, 0o755); err != nil {
			return err
		}
	}
	driver, err := standInDriver()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(h.libDir, smoketest.DriverLibraryName), driver, 0o755)
}

// lookPath finds a program on the host's PATH (not on the stand-ins').
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not on PATH", name)
}

// AddImage says that pods started from image (the reference as the pod is
// created with it) find files in it beyond the stand-in machine: each path
// of files (absolute, as in the image) with its content. A pod of that image
// sees them at ImagePath; a pod of any other image does not.
func (h *ProcessHosts) AddImage(image string, files map[string][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.images[image] = files
}

// ImagePath is where a pod started from image sees the image's file p:
// render startup scripts for that image with ImagePath(image,
// startup.DefaultImageProof) as startup.Params.ImageProof. The file is there
// once a pod of that image has started, and only if the image carries it.
func (h *ProcessHosts) ImagePath(image, p string) string {
	return filepath.Join(h.imagesDir, safeName(image), filepath.FromSlash(p))
}

// unpackImage lays out the files an image carries where its pods see them.
func (h *ProcessHosts) unpackImage(image string) error {
	for p, data := range h.images[image] {
		local := h.ImagePath(image, p)
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(local, data, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Downloads lists every curl or wget call the pod's containers made, in
// order ("curl <arguments>"); none for a pod never started here.
func (h *ProcessHosts) Downloads(podID string) []string {
	data, err := os.ReadFile(filepath.Join(h.downloadsDir, safeName(podID)))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// RunnerDir is where the stand-in runner's run.sh is: render startup scripts
// with it as startup.Params.RunnerDir.
func (h *ProcessHosts) RunnerDir() string { return h.runnerDir }

// WorkDir is a directory removed with the hosts: render startup scripts with
// it as startup.Params.WorkDir so their temporary files go with it.
func (h *ProcessHosts) WorkDir() string { return h.workDir }

// Start runs the pod's container. It returns once the process is started.
func (h *ProcessHosts) Start(l runpodsim.Launch, exited runpodsim.ExitFunc) error {
	argv := slices.Concat(l.Entrypoint, l.Cmd)
	if len(argv) == 0 {
		return ErrNoCommand
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errors.New("cloud: process hosts are closed")
	}
	if c := h.running[l.PodID]; c != nil {
		h.stopLocked(c) // a restart replaces the container
	}
	dir, err := os.MkdirTemp(h.podsDir, safeName(l.PodID)+"-")
	if err != nil {
		return err
	}
	if err := h.unpackImage(l.Image); err != nil {
		return err
	}
	env, err := h.environment(l, dir)
	if err != nil {
		return err
	}
	log := h.logs[l.PodID]
	if log == nil {
		log = &podLog{}
		h.logs[l.PodID] = log
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	out := io.Writer(log)
	if l.Log != nil {
		// The pod's log stream (GET /v2/pods/{id}/logs) gets each line as written.
		out = io.MultiWriter(log, &lineWriter{emit: l.Log})
	}
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A straggler holding the output pipe must not keep Wait from returning.
	cmd.WaitDelay = stopGrace
	if err := cmd.Start(); err != nil {
		return err
	}
	c := &container{cmd: cmd, done: make(chan struct{})}
	h.running[l.PodID] = c
	h.wg.Add(1)
	go h.wait(l.PodID, c, exited)
	return nil
}

// wait reaps the container and reports its exit unless it was stopped.
func (h *ProcessHosts) wait(podID string, c *container, exited runpodsim.ExitFunc) {
	defer h.wg.Done()
	err := c.cmd.Wait()
	// When the container's first process ends the container ends: whatever
	// it left running in its group goes too.
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	h.mu.Lock()
	close(c.done)
	if h.running[podID] == c {
		delete(h.running, podID)
	}
	report := !c.stopped
	h.mu.Unlock()
	if report {
		exited(exitCode(c.cmd.ProcessState, err))
	}
}

// exitCode is the container's exit status; a signal counts as 128+signal, as a shell reports it.
func exitCode(state *os.ProcessState, err error) int {
	if state == nil {
		return 127 // never ran
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if code := state.ExitCode(); code >= 0 {
		return code
	}
	if err != nil {
		return 1
	}
	return 0
}

// Stop kills the pod's container: SIGTERM to its process group, SIGKILL after
// a short grace. It does not wait; no exit is reported for a stopped container.
func (h *ProcessHosts) Stop(podID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c := h.running[podID]; c != nil {
		h.stopLocked(c)
		delete(h.running, podID)
	}
}

func (h *ProcessHosts) stopLocked(c *container) {
	if c.stopped {
		return
	}
	c.stopped = true
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	go func() {
		select {
		case <-c.done:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}()
}

// Log returns everything the pod's containers wrote to stdout and stderr so
// far (every start, in order); "" for a pod never started here.
func (h *ProcessHosts) Log(podID string) string {
	h.mu.Lock()
	log := h.logs[podID]
	h.mu.Unlock()
	if log == nil {
		return ""
	}
	return log.String()
}

// Close stops every container, waits for them and removes the hosts' directory.
func (h *ProcessHosts) Close() error {
	h.mu.Lock()
	h.closed = true
	for id, c := range h.running {
		h.stopLocked(c)
		delete(h.running, id)
	}
	h.mu.Unlock()
	h.wg.Wait()
	return os.RemoveAll(h.root)
}

// environment is the container's environment: the pod's env, overridden by
// what the machine imposes (HOME and TMPDIR in the private directory,
// stand-ins first on PATH, the driver stand-in configured from the host
// profile). Nothing else is inherited from this process, as nothing of the
// host leaks into a real container.
func (h *ProcessHosts) environment(l runpodsim.Launch, dir string) ([]string, error) {
	driver, err := driverConfig(l.Host, l.GPUCount)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for k, v := range l.Env {
		vars[k] = v
	}
	vars["HOME"], vars["TMPDIR"] = dir, dir
	vars["PATH"] = h.binDir + string(os.PathListSeparator) + h.hostPath
	vars["LD_LIBRARY_PATH"] = h.libDir
	vars["SIM_DOWNLOAD_LOG"] = filepath.Join(h.downloadsDir, safeName(l.PodID))
	for name, real := range h.realDownloaders {
		vars["SIM_REAL_"+strings.ToUpper(name)] = real
	}
	vars["SIM_NVIDIA_DRIVER_VERSION"] = KernelDriverVersion(l.Host.DriverCUDA)
	uuids := make([]string, max(l.GPUCount, 1))
	for i := range uuids {
		uuids[i] = l.Host.GPUUUID(i)
	}
	vars["SIM_GPU_UUIDS"] = strings.Join(uuids, " ")
	for _, name := range smoketest.EnvNames {
		delete(vars, name) // only the host profile configures the driver
	}
	for _, kv := range driver.Env() {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env, nil
}

// driverConfig is the CUDA driver stand-in's configuration for a host: its
// driver's CUDA version and PTX ISA, its VRAM (catalog GB read as GiB, as a
// "24 GB" card reports about 24 GiB), gpuCount devices named after the GPU
// type, and a kernel that reads back the wrong value on an unhealthy host.
func driverConfig(h runpodsim.HostProfile, gpuCount int) (smoketest.DriverConfig, error) {
	v, err := cudaver.Parse(h.DriverCUDA)
	if err != nil {
		return smoketest.DriverConfig{}, fmt.Errorf("host %s: driver CUDA %q: %w", h.ID, h.DriverCUDA, err)
	}
	cfg := smoketest.DriverConfig{
		DriverVersion: v.Major*1000 + v.Minor*10,
		MaxPTXISA:     h.MaxPTXISA,
		VRAMMiB:       h.VRAMGB * 1024,
		DeviceName:    h.GPUTypeID,
		DeviceCount:   max(gpuCount, 1),
		ReadBack:      "correct",
	}
	if !h.Healthy {
		cfg.ReadBack = "wrong"
	}
	return cfg, nil
}

// kernelDriverVersions are the Linux drivers that first shipped each CUDA
// release, for what nvidia-smi prints as "Driver Version".
var kernelDriverVersions = []struct{ cuda, driver string }{
	{"12.0", "525.60.13"}, {"12.1", "530.30.02"}, {"12.2", "535.54.03"}, {"12.3", "545.23.06"},
	{"12.4", "550.54.14"}, {"12.5", "555.42.02"}, {"12.6", "560.28.03"}, {"12.8", "570.124.06"},
	{"12.9", "575.51.03"}, {"13.0", "580.65.06"},
}

// KernelDriverVersion is the kernel driver version nvidia-smi reports on a
// simulated host whose driver supports CUDA cuda ("12.8" → "570.124.06").
func KernelDriverVersion(cuda string) string {
	want, err := cudaver.Parse(cuda)
	if err != nil {
		return "unknown"
	}
	driver := "520.61.05" // CUDA 11.8's, for anything older than the table
	for _, e := range kernelDriverVersions {
		if v, _ := cudaver.Parse(e.cuda); want.AtLeast(v) {
			driver = e.driver
		}
	}
	return driver
}

// safeName keeps a pod id usable as part of a file name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, id)
}

// build caches an artifact built once per process, success or failure.
type build struct {
	once sync.Once
	data []byte
	err  error
}

// get builds the artifact once, in a temporary directory named after prefix
// and removed afterwards: f builds it there and returns the file it wrote.
func (b *build) get(prefix string, f func(dir string) (string, error)) ([]byte, error) {
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			b.err = err
			return
		}
		defer os.RemoveAll(dir)
		file, err := f(dir)
		if err != nil {
			b.err = err
			return
		}
		b.data, b.err = os.ReadFile(file)
	})
	return b.data, b.err
}

var proofBuild, driverBuild build

// ProofBinary builds the real CUDA smoke proof (./pkg/cmd/cuda-smoke,
// CGO_ENABLED=0, stripped) with the go tool once per process and returns it.
// It must run inside this module's source tree.
func ProofBinary() ([]byte, error) {
	return proofBuild.get("cuda-smoke-build-", func(dir string) (string, error) {
		out := filepath.Join(dir, "cuda-smoke")
		// Stripped, as a release build is: a smaller download for every pod.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "github.com/org/runpod-gpu/pkg/cmd/cuda-smoke")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build the CUDA smoke proof (run inside the runpod-gpu module): %w: %s", err, bytes.TrimSpace(msg))
		}
		return out, nil
	})
}

// standInDriver builds the CUDA driver stand-in once per process.
func standInDriver() ([]byte, error) {
	return driverBuild.get("libcuda-standin-", smoketest.BuildStandInDriver)
}
