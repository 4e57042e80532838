// Package cudalib binds the smoke proof's Driver and NVRTC interfaces to NVIDIA's libraries,
// loaded at run time with github.com/ebitengine/purego, so the proof builds with CGO_ENABLED=0.
//
// What purego needs for CGO_ENABLED=0 on linux/amd64: nothing beyond importing it. Without cgo
// it links its own Go implementation of runtime/cgo (purego/internal/fakecgo) and imports
// dlopen/dlsym/dlerror/dlclose from libdl.so.2 and a few functions from libc.so.6 and
// libpthread.so.0 through //go:cgo_import_dynamic. The linker therefore writes a dynamically
// linked executable whose only DT_NEEDED entries are those glibc libraries, with the interpreter
// /lib64/ld-linux-x86-64.so.2; libcuda.so.1 and libnvrtc are not linked at all but dlopen'ed when
// the proof runs. The binary needs a glibc system (the runner image is Ubuntu) and no C toolchain.
package cudalib

import (
	"fmt"
	"io"
	"path/filepath"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/org/runpod-gpu/pkg/smoke"
)

// DriverLibrary is the CUDA driver's versioned soname. The unversioned libcuda.so exists only
// where a CUDA toolkit's development files are installed, so the proof never relies on it.
const DriverLibrary = "libcuda.so.1"

// NewProof returns a proof of cfg wired to the real libraries: libcuda.so.1 through the
// system loader's search path and NVRTC from the pinned package. Output goes to out; getenv is
// the process environment.
func NewProof(cfg smoke.Config, out io.Writer, getenv func(string) string) *smoke.Proof {
	return &smoke.Proof{
		Config:     cfg,
		OpenDriver: func() (smoke.Driver, error) { return OpenDriver(DriverLibrary) },
		OpenNVRTC:  func(libPath string) (smoke.NVRTC, error) { return OpenNVRTC(libPath) },
		Getenv:     getenv,
		Out:        out,
	}
}

// open dlopens a library, reporting failure as smoke.ErrLibraryMissing with the loader's reason.
func open(name string) (uintptr, error) {
	handle, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", smoke.ErrLibraryMissing, name, err)
	}
	return handle, nil
}

// binding is one C function to resolve: its symbol and the Go func variable to bind it to.
type binding struct {
	symbol string
	fn     any
}

// bindAll resolves each symbol with Dlsym before binding it, so a library lacking one is an
// error (and no half-bound value escapes) rather than purego's panic.
func bindAll(lib string, handle uintptr, bindings []binding) error {
	for _, b := range bindings {
		sym, err := purego.Dlsym(handle, b.symbol)
		if err != nil {
			return fmt.Errorf("%w: %s has no %s", smoke.ErrSymbolMissing, lib, b.symbol)
		}
		purego.RegisterFunc(b.fn, sym)
	}
	return nil
}

// goString copies a NUL-terminated C string; nil gives "".
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cString returns s as a NUL-terminated byte slice whose first element C can read.
func cString(s string) []byte {
	return append([]byte(s), 0)
}

// preloadBuiltins loads the NVRTC builtins libraries found beside libPath. NVRTC dlopens its
// builtins by soname; the glibc loader answers such a request with an already-loaded library of
// that soname, so loading them first by full path makes a package unpacked into a private
// directory work without LD_LIBRARY_PATH or ldconfig.
func preloadBuiltins(libPath string) error {
	matches, err := filepath.Glob(filepath.Join(filepath.Dir(libPath), "libnvrtc-builtins.so.*"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if _, err := open(m); err != nil {
			return err
		}
	}
	return nil
}
