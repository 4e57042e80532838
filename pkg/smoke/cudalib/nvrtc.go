package cudalib

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/smoke"
)

// NVRTC is smoke.NVRTC over a dlopen'ed libnvrtc.so.N.
type NVRTC struct {
	nvrtcVersion           func(major, minor *int32) int32
	nvrtcCreateProgram     func(prog *uintptr, src *byte, name *byte, numHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcCompileProgram    func(prog uintptr, numOptions int32, options *unsafe.Pointer) int32
	nvrtcGetPTXSize        func(prog uintptr, size *uint64) int32
	nvrtcGetPTX            func(prog uintptr, ptx *byte) int32
	nvrtcGetProgramLogSize func(prog uintptr, size *uint64) int32
	nvrtcGetProgramLog     func(prog uintptr, log *byte) int32
	nvrtcDestroyProgram    func(prog *uintptr) int32
	nvrtcGetErrorString    func(code int32) *byte
}

var _ smoke.NVRTC = (*NVRTC)(nil)

// OpenNVRTC loads the NVRTC library at libPath, a versioned soname file such as
// .../libnvrtc.so.12 (never the development symlink libnvrtc.so), after preloading the builtins
// library beside it.
func OpenNVRTC(libPath string) (*NVRTC, error) {
	if err := preloadBuiltins(libPath); err != nil {
		return nil, err
	}
	handle, err := open(libPath)
	if err != nil {
		return nil, err
	}
	n := &NVRTC{}
	err = bindAll(libPath, handle, []binding{
		{"nvrtcVersion", &n.nvrtcVersion},
		{"nvrtcCreateProgram", &n.nvrtcCreateProgram},
		{"nvrtcCompileProgram", &n.nvrtcCompileProgram},
		{"nvrtcGetPTXSize", &n.nvrtcGetPTXSize},
		{"nvrtcGetPTX", &n.nvrtcGetPTX},
		{"nvrtcGetProgramLogSize", &n.nvrtcGetProgramLogSize},
		{"nvrtcGetProgramLog", &n.nvrtcGetProgramLog},
		{"nvrtcDestroyProgram", &n.nvrtcDestroyProgram},
		{"nvrtcGetErrorString", &n.nvrtcGetErrorString},
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// check turns an nvrtcResult into nil or a *smoke.CallError with NVRTC's own name for it.
func (n *NVRTC) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	return &smoke.CallError{Call: call, Err: smoke.NVRTCResult(code), Message: goString(n.nvrtcGetErrorString(code))}
}

// Version calls nvrtcVersion.
func (n *NVRTC) Version() (smoke.Version, error) {
	var major, minor int32
	if err := n.check("nvrtcVersion", n.nvrtcVersion(&major, &minor)); err != nil {
		return smoke.Version{}, err
	}
	v, err := cudaver.FromCode(int(major)*1000 + int(minor)*10)
	if err != nil {
		return smoke.Version{}, fmt.Errorf("nvrtcVersion: %d.%d: %w", major, minor, err)
	}
	return v, nil
}

// maxLogBytes bounds the compile log kept in an error.
const maxLogBytes = 4096

// Compile compiles source (file name name) with options and returns the PTX.
func (n *NVRTC) Compile(source, name string, options []string) (string, error) {
	src, cname := cString(source), cString(name)
	var prog uintptr
	err := n.check("nvrtcCreateProgram", n.nvrtcCreateProgram(&prog, &src[0], &cname[0], 0, nil, nil))
	runtime.KeepAlive(src)
	runtime.KeepAlive(cname)
	if err != nil {
		return "", err
	}
	defer n.nvrtcDestroyProgram(&prog)

	// options is a C array of char*; each element points into a Go byte slice kept alive below.
	copies := make([][]byte, len(options))
	ptrs := make([]unsafe.Pointer, len(options)+1)
	for i, o := range options {
		copies[i] = cString(o)
		ptrs[i] = unsafe.Pointer(&copies[i][0])
	}
	code := n.nvrtcCompileProgram(prog, int32(len(options)), &ptrs[0])
	runtime.KeepAlive(copies)
	runtime.KeepAlive(ptrs)
	if code != 0 {
		return "", &smoke.CallError{Call: "nvrtcCompileProgram", Err: smoke.NVRTCResult(code),
			Message: goString(n.nvrtcGetErrorString(code)), Log: n.programLog(prog)}
	}

	var size uint64
	if err := n.check("nvrtcGetPTXSize", n.nvrtcGetPTXSize(prog, &size)); err != nil {
		return "", err
	}
	if size == 0 || size > 64<<20 {
		return "", fmt.Errorf("nvrtcGetPTXSize: implausible size %d", size)
	}
	buf := make([]byte, size)
	if err := n.check("nvrtcGetPTX", n.nvrtcGetPTX(prog, &buf[0])); err != nil {
		return "", err
	}
	return goString(&buf[0]), nil
}

// programLog returns the compile log, bounded; errors reading it give "".
func (n *NVRTC) programLog(prog uintptr) string {
	var size uint64
	if n.nvrtcGetProgramLogSize(prog, &size) != 0 || size <= 1 || size > 16<<20 {
		return ""
	}
	buf := make([]byte, size)
	if n.nvrtcGetProgramLog(prog, &buf[0]) != 0 {
		return ""
	}
	log := goString(&buf[0])
	if len(log) > maxLogBytes {
		log = log[:maxLogBytes] + "…"
	}
	return log
}
