// Package smoketest builds the stand-in CUDA libraries that tests of the smoke proof, and the
// simulated hosts of the simulated cloud, load in place of NVIDIA's: a libcuda.so.1 whose
// behaviour is set by SIM_CUDA_* environment variables, and a libnvrtc.so.N of a chosen version.
// The C sources are in testdata/ (embedded here) and their header comments document every
// variable and what is emulated. Building needs gcc; without it the builders return
// ErrNoCompiler and the Require helpers skip the test saying so.
package smoketest

import (
	"archive/tar"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/smoke"
)

//go:embed testdata/*.c
var sources embed.FS

// ErrNoCompiler means gcc is not on PATH, so the stand-ins cannot be built.
var ErrNoCompiler = errors.New("gcc not found on PATH; the CUDA stand-in libraries are built from C source with gcc")

// DriverLibraryName is the file and soname of the driver stand-in, the name the proof dlopens.
const DriverLibraryName = "libcuda.so.1"

// BuildStandInDriver compiles the libcuda.so.1 stand-in into dir and returns its path. Point
// LD_LIBRARY_PATH at dir, or dlopen the path, to use it.
func BuildStandInDriver(dir string) (libPath string, err error) {
	libPath = filepath.Join(dir, DriverLibraryName)
	return libPath, compile(dir, "libcuda_standin.c", libPath, DriverLibraryName)
}

// NVRTCLibraryName is the versioned soname of NVRTC for CUDA major release major.
func NVRTCLibraryName(major int) string { return fmt.Sprintf("libnvrtc.so.%d", major) }

// builtinsName is the soname NVRTC v loads its builtins by.
func builtinsName(v smoke.Version) string {
	return fmt.Sprintf("libnvrtc-builtins.so.%d.%d", v.Major, v.Minor)
}

// BuildStandInNVRTC compiles an NVRTC stand-in reporting version into dir as
// libnvrtc.so.MAJOR, with its builtins library libnvrtc-builtins.so.MAJOR.MINOR beside it, and
// returns the NVRTC path.
func BuildStandInNVRTC(dir string, version smoke.Version) (libPath string, err error) {
	if err := compile(dir, "libnvrtc_builtins_standin.c", filepath.Join(dir, builtinsName(version)), builtinsName(version)); err != nil {
		return "", err
	}
	libPath = filepath.Join(dir, NVRTCLibraryName(version.Major))
	return libPath, compile(dir, "libnvrtc_standin.c", libPath, NVRTCLibraryName(version.Major),
		"-DSTANDIN_NVRTC_MAJOR="+strconv.Itoa(version.Major), "-DSTANDIN_NVRTC_MINOR="+strconv.Itoa(version.Minor))
}

// BuildNVRTCPackage builds the NVRTC stand-in of version and packs it as a .tar.gz laid out
// like NVIDIA's cuda-nvrtc package (usr/local/cuda-M.m/targets/x86_64-linux/lib/, the soname
// files being symbolic links to the fully versioned ones). It returns the archive's path in dir.
func BuildNVRTCPackage(dir string, version smoke.Version) (archivePath string, err error) {
	buildDir, err := os.MkdirTemp(dir, "nvrtc-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(buildDir)
	if _, err := BuildStandInNVRTC(buildDir, version); err != nil {
		return "", err
	}
	libDir := fmt.Sprintf("usr/local/cuda-%s/targets/x86_64-linux/lib/", version)
	files := []struct{ soname, file string }{
		{NVRTCLibraryName(version.Major), fmt.Sprintf("libnvrtc.so.%d.%d.0", version.Major, version.Minor)},
		{builtinsName(version), builtinsName(version) + ".0"},
	}
	archivePath = filepath.Join(dir, fmt.Sprintf("cuda-nvrtc-%d-%d_standin.tar.gz", version.Major, version.Minor))
	out, err := os.Create(archivePath)
	if err != nil {
		return "", err
	}
	gz := gzip.NewWriter(out)
	tw := tar.NewWriter(gz)
	write := func(hdr *tar.Header, body []byte) error {
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	err = write(&tar.Header{Name: "./" + libDir, Typeflag: tar.TypeDir, Mode: 0o755}, nil)
	for _, f := range files {
		if err != nil {
			break
		}
		var body []byte
		if body, err = os.ReadFile(filepath.Join(buildDir, f.soname)); err != nil {
			break
		}
		if err = write(&tar.Header{Name: "./" + libDir + f.file, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body); err != nil {
			break
		}
		err = write(&tar.Header{Name: "./" + libDir + f.soname, Typeflag: tar.TypeSymlink, Linkname: f.file, Mode: 0o777}, nil)
	}
	err = errors.Join(err, tw.Close(), gz.Close(), out.Close())
	if err != nil {
		return "", fmt.Errorf("pack NVRTC stand-in: %w", err)
	}
	return archivePath, nil
}

// compile builds one stand-in source into a shared library out with the given soname.
func compile(dir, source, out, soname string, defines ...string) error {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		return ErrNoCompiler
	}
	code, err := fs.ReadFile(sources, "testdata/"+source)
	if err != nil {
		return err
	}
	srcPath := filepath.Join(dir, source)
	if err := os.WriteFile(srcPath, code, 0o644); err != nil {
		return err
	}
	args := append([]string{"-shared", "-fPIC", "-O1", "-std=gnu11", "-Wall", "-Wextra",
		"-Wl,-soname," + soname, "-o", out}, defines...)
	args = append(args, srcPath, "-ldl")
	if msg, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("gcc %s: %w: %s", source, err, strings.TrimSpace(string(msg)))
	}
	return nil
}

// TB is the part of testing.TB the Require helpers use; an interface of
// this package's own keeps the testing package out of programs that link
// the stand-ins' builders (the simulated cloud that runpod-gpu rehearse starts).
type TB interface {
	Helper()
	TempDir() string
	Skipf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// RequireStandInDriver builds the driver stand-in into a fresh temporary directory and returns
// that directory; it skips tb when gcc is absent and fails it on any other error.
func RequireStandInDriver(tb TB) (dir string) {
	tb.Helper()
	dir = tb.TempDir()
	if _, err := BuildStandInDriver(dir); err != nil {
		skipOrFail(tb, err)
	}
	return dir
}

// RequireNVRTCPackage builds an NVRTC stand-in package of version into a fresh temporary
// directory and returns the archive's path, skipping tb when gcc is absent.
func RequireNVRTCPackage(tb TB, version smoke.Version) (archivePath string) {
	tb.Helper()
	archivePath, err := BuildNVRTCPackage(tb.TempDir(), version)
	if err != nil {
		skipOrFail(tb, err)
	}
	return archivePath
}

func skipOrFail(tb TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNoCompiler) {
		tb.Skipf("skipping: %v", err)
	}
	tb.Fatalf("build CUDA stand-in: %v", err)
}

// DriverConfig is the driver stand-in's configuration; Env turns it into SIM_CUDA_* variables.
// Zero fields keep the stand-in's defaults (CUDA 12.8, compute capability 8.9, 24564 MiB).
type DriverConfig struct {
	// DriverVersion is cuDriverGetVersion's answer, e.g. 12080.
	DriverVersion int
	// MaxPTXISA is the newest PTX ISA the JIT accepts, e.g. "8.7".
	MaxPTXISA string
	// ComputeCapability is the device's, e.g. "8.9".
	ComputeCapability string
	// VRAMMiB is the device's memory.
	VRAMMiB int
	// DeviceName is cuDeviceGetName's answer.
	DeviceName string
	// DeviceCount is the number of devices; set NoDevice for zero.
	DeviceCount int
	// NoDevice makes cuInit fail with CUDA_ERROR_NO_DEVICE.
	NoDevice bool
	// ReadBack is "correct", "wrong" or "zero".
	ReadBack string
	// Fail is "NAME:CODE": entry point NAME returns CODE.
	Fail string
	// CallLog is the file the stand-ins append each call's name to.
	CallLog string
}

// Env returns the configuration as "SIM_CUDA_NAME=value" entries, one per set field.
func (c DriverConfig) Env() []string {
	var env []string
	add := func(name, value string) {
		if value != "" && value != "0" {
			env = append(env, name+"="+value)
		}
	}
	add("SIM_CUDA_DRIVER_VERSION", strconv.Itoa(c.DriverVersion))
	add("SIM_CUDA_MAX_PTX_ISA", c.MaxPTXISA)
	add("SIM_CUDA_CC", c.ComputeCapability)
	add("SIM_CUDA_VRAM_MB", strconv.Itoa(c.VRAMMiB))
	add("SIM_CUDA_DEVICE_NAME", c.DeviceName)
	add("SIM_CUDA_DEVICE_COUNT", strconv.Itoa(c.DeviceCount))
	if c.NoDevice {
		env = append(env, "SIM_CUDA_DEVICE_COUNT=0")
	}
	add("SIM_CUDA_READBACK", c.ReadBack)
	add("SIM_CUDA_FAIL", c.Fail)
	add("SIM_CUDA_CALL_LOG", c.CallLog)
	return env
}

// EnvNames lists every variable the driver stand-in reads, so a caller can clear them all.
var EnvNames = []string{
	"SIM_CUDA_DRIVER_VERSION", "SIM_CUDA_MAX_PTX_ISA", "SIM_CUDA_CC", "SIM_CUDA_VRAM_MB",
	"SIM_CUDA_DEVICE_NAME", "SIM_CUDA_DEVICE_COUNT", "SIM_CUDA_READBACK", "SIM_CUDA_FAIL",
	"SIM_CUDA_CALL_LOG",
}

// ReadCallLog returns the entry points logged to path, in call order; a missing file means no
// call was logged.
func ReadCallLog(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data)), nil
}
