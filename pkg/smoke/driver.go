package smoke

import "fmt"

// Driver is the part of the CUDA driver API the proof calls, one method per entry point, so that
// the proof's logic runs against fakes in unit tests and against libcuda.so.1 through
// package cudalib. Methods follow the C calls' order of arguments and report a non-zero
// CUresult as a *CallError wrapping a Result.
type Driver interface {
	// Init calls cuInit(0).
	Init() error
	// DriverGetVersion calls cuDriverGetVersion: the CUDA API version the driver supports, e.g. 12080.
	DriverGetVersion() (int, error)
	// DeviceGet calls cuDeviceGet.
	DeviceGet(ordinal int) (Device, error)
	// DeviceGetName calls cuDeviceGetName.
	DeviceGetName(dev Device) (string, error)
	// DeviceGetAttribute calls cuDeviceGetAttribute.
	DeviceGetAttribute(attr DeviceAttribute, dev Device) (int, error)
	// DeviceTotalMem calls cuDeviceTotalMem_v2: the device's memory in bytes.
	DeviceTotalMem(dev Device) (uint64, error)
	// PrimaryCtxRetain calls cuDevicePrimaryCtxRetain.
	PrimaryCtxRetain(dev Device) (Context, error)
	// PrimaryCtxRelease calls cuDevicePrimaryCtxRelease_v2; the last release destroys the
	// context and everything allocated in it.
	PrimaryCtxRelease(dev Device) error
	// CtxSetCurrent calls cuCtxSetCurrent for the calling OS thread.
	CtxSetCurrent(ctx Context) error
	// ModuleLoadData calls cuModuleLoadData with PTX text; the driver JIT-compiles it.
	ModuleLoadData(ptx string) (Module, error)
	// ModuleGetFunction calls cuModuleGetFunction.
	ModuleGetFunction(mod Module, name string) (Function, error)
	// MemAlloc calls cuMemAlloc_v2.
	MemAlloc(bytes uint64) (DevicePtr, error)
	// LaunchKernel calls cuLaunchKernel on the default stream without shared memory. Each arg
	// is a DevicePtr, uint32 or uint64 kernel parameter.
	LaunchKernel(fn Function, grid, block Dim3, args ...any) error
	// CtxSynchronize calls cuCtxSynchronize; errors of earlier launches surface here.
	CtxSynchronize() error
	// MemcpyDtoH calls cuMemcpyDtoH_v2, filling dst from device memory at src.
	MemcpyDtoH(dst []byte, src DevicePtr) error
}

// Handles the driver hands out; opaque to the proof.
type (
	// Device is a CUdevice ordinal handle.
	Device int32
	// Context is a CUcontext.
	Context uintptr
	// Module is a CUmodule.
	Module uintptr
	// Function is a CUfunction.
	Function uintptr
	// DevicePtr is a CUdeviceptr.
	DevicePtr uint64
)

// Dim3 is a grid or block shape.
type Dim3 struct {
	X, Y, Z uint32
}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// The attributes the proof reads (values from cuda.h).
const (
	AttrComputeCapabilityMajor DeviceAttribute = 75
	AttrComputeCapabilityMinor DeviceAttribute = 76
)

// Result is a CUresult, the driver API's status code. It is an error so that callers can test
// for a code with errors.Is(err, smoke.ErrorUnsupportedPTXVersion).
type Result int32

// The CUresult codes the proof and the stand-in driver use (values from cuda.h).
const (
	ErrorInvalidValue          Result = 1
	ErrorOutOfMemory           Result = 2
	ErrorNotInitialized        Result = 3
	ErrorNoDevice              Result = 100
	ErrorInvalidDevice         Result = 101
	ErrorInvalidImage          Result = 200
	ErrorInvalidContext        Result = 201
	ErrorNoBinaryForGPU        Result = 209
	ErrorInvalidPTX            Result = 218
	ErrorUnsupportedPTXVersion Result = 222
	ErrorInvalidHandle         Result = 400
	ErrorNotFound              Result = 500
	ErrorIllegalAddress        Result = 700
	ErrorLaunchFailed          Result = 719
)

var resultNames = map[Result]string{
	ErrorInvalidValue:          "CUDA_ERROR_INVALID_VALUE",
	ErrorOutOfMemory:           "CUDA_ERROR_OUT_OF_MEMORY",
	ErrorNotInitialized:        "CUDA_ERROR_NOT_INITIALIZED",
	ErrorNoDevice:              "CUDA_ERROR_NO_DEVICE",
	ErrorInvalidDevice:         "CUDA_ERROR_INVALID_DEVICE",
	ErrorInvalidImage:          "CUDA_ERROR_INVALID_IMAGE",
	ErrorInvalidContext:        "CUDA_ERROR_INVALID_CONTEXT",
	ErrorNoBinaryForGPU:        "CUDA_ERROR_NO_BINARY_FOR_GPU",
	ErrorInvalidPTX:            "CUDA_ERROR_INVALID_PTX",
	ErrorUnsupportedPTXVersion: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
	ErrorInvalidHandle:         "CUDA_ERROR_INVALID_HANDLE",
	ErrorNotFound:              "CUDA_ERROR_NOT_FOUND",
	ErrorIllegalAddress:        "CUDA_ERROR_ILLEGAL_ADDRESS",
	ErrorLaunchFailed:          "CUDA_ERROR_LAUNCH_FAILED",
}

// Error names the code as cuda.h does, e.g. "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)".
func (r Result) Error() string {
	if name, ok := resultNames[r]; ok {
		return fmt.Sprintf("%s (%d)", name, int32(r))
	}
	return fmt.Sprintf("CUresult %d", int32(r))
}

// NVRTCResult is an nvrtcResult status code.
type NVRTCResult int32

// Error formats the code; CallError.Message carries nvrtcGetErrorString's text.
func (r NVRTCResult) Error() string { return fmt.Sprintf("nvrtcResult %d", int32(r)) }

// CallError is a library call that returned a non-zero status.
type CallError struct {
	// Call is the C function, e.g. "cuModuleLoadData".
	Call string
	// Err is the status: a Result or an NVRTCResult.
	Err error
	// Message is the library's own description (cuGetErrorString, nvrtcGetErrorString), if any.
	Message string
	// Log is the compiler log of a failed NVRTC compile, if any.
	Log string
}

// Error returns "call: status: message".
func (e *CallError) Error() string {
	s := e.Call + ": " + e.Err.Error()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Log != "" {
		s += "; log: " + e.Log
	}
	return s
}

// Unwrap returns the status.
func (e *CallError) Unwrap() error { return e.Err }
