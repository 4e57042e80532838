package cudalib

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/org/runpod-gpu/pkg/smoke"
)

// Driver is smoke.Driver over a dlopen'ed libcuda.so.1 (or a stand-in with the same symbols).
type Driver struct {
	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(version *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, length int32, dev int32) int32
	cuDeviceGetAttribute      func(value *int32, attr int32, dev int32) int32
	cuDeviceTotalMem          func(bytes *uint64, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuModuleLoadData          func(mod *uintptr, image *byte) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name *byte) int32
	cuMemAlloc                func(ptr *uint64, bytes uint64) int32
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, sharedMem uint32, stream uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) int32
	cuCtxSynchronize          func() int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, bytes uint64) int32
	cuGetErrorString          func(code int32, text **byte) int32
}

var _ smoke.Driver = (*Driver)(nil)

// OpenDriver loads the CUDA driver library name (normally DriverLibrary) and resolves the entry
// points the proof calls. The library stays loaded for the life of the process: drivers do not
// expect to be unloaded.
func OpenDriver(name string) (*Driver, error) {
	handle, err := open(name)
	if err != nil {
		return nil, err
	}
	d := &Driver{}
	err = bindAll(name, handle, []binding{
		{"cuInit", &d.cuInit},
		{"cuDriverGetVersion", &d.cuDriverGetVersion},
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetName", &d.cuDeviceGetName},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute},
		{"cuDeviceTotalMem_v2", &d.cuDeviceTotalMem},
		{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease},
		{"cuCtxSetCurrent", &d.cuCtxSetCurrent},
		{"cuModuleLoadData", &d.cuModuleLoadData},
		{"cuModuleGetFunction", &d.cuModuleGetFunction},
		{"cuMemAlloc_v2", &d.cuMemAlloc},
		{"cuLaunchKernel", &d.cuLaunchKernel},
		{"cuCtxSynchronize", &d.cuCtxSynchronize},
		{"cuMemcpyDtoH_v2", &d.cuMemcpyDtoH},
		{"cuGetErrorString", &d.cuGetErrorString},
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// check turns a CUresult into nil or a *smoke.CallError carrying the driver's own description.
func (d *Driver) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	var text *byte
	var message string
	if d.cuGetErrorString(code, &text) == 0 {
		message = goString(text)
	}
	return &smoke.CallError{Call: call, Err: smoke.Result(code), Message: message}
}

// Init calls cuInit(0).
func (d *Driver) Init() error { return d.check("cuInit", d.cuInit(0)) }

// DriverGetVersion calls cuDriverGetVersion.
func (d *Driver) DriverGetVersion() (int, error) {
	var v int32
	err := d.check("cuDriverGetVersion", d.cuDriverGetVersion(&v))
	return int(v), err
}

// DeviceGet calls cuDeviceGet.
func (d *Driver) DeviceGet(ordinal int) (smoke.Device, error) {
	var dev int32
	err := d.check("cuDeviceGet", d.cuDeviceGet(&dev, int32(ordinal)))
	return smoke.Device(dev), err
}

// DeviceGetName calls cuDeviceGetName.
func (d *Driver) DeviceGetName(dev smoke.Device) (string, error) {
	var name [256]byte
	if err := d.check("cuDeviceGetName", d.cuDeviceGetName(&name[0], int32(len(name)), int32(dev))); err != nil {
		return "", err
	}
	name[len(name)-1] = 0
	return goString(&name[0]), nil
}

// DeviceGetAttribute calls cuDeviceGetAttribute.
func (d *Driver) DeviceGetAttribute(attr smoke.DeviceAttribute, dev smoke.Device) (int, error) {
	var v int32
	err := d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&v, int32(attr), int32(dev)))
	return int(v), err
}

// DeviceTotalMem calls cuDeviceTotalMem_v2.
func (d *Driver) DeviceTotalMem(dev smoke.Device) (uint64, error) {
	var n uint64
	err := d.check("cuDeviceTotalMem_v2", d.cuDeviceTotalMem(&n, int32(dev)))
	return n, err
}

// PrimaryCtxRetain calls cuDevicePrimaryCtxRetain.
func (d *Driver) PrimaryCtxRetain(dev smoke.Device) (smoke.Context, error) {
	var ctx uintptr
	err := d.check("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&ctx, int32(dev)))
	return smoke.Context(ctx), err
}

// PrimaryCtxRelease calls cuDevicePrimaryCtxRelease_v2.
func (d *Driver) PrimaryCtxRelease(dev smoke.Device) error {
	return d.check("cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease(int32(dev)))
}

// CtxSetCurrent calls cuCtxSetCurrent.
func (d *Driver) CtxSetCurrent(ctx smoke.Context) error {
	return d.check("cuCtxSetCurrent", d.cuCtxSetCurrent(uintptr(ctx)))
}

// ModuleLoadData calls cuModuleLoadData with the NUL-terminated PTX text.
func (d *Driver) ModuleLoadData(ptx string) (smoke.Module, error) {
	image := cString(ptx)
	var mod uintptr
	err := d.check("cuModuleLoadData", d.cuModuleLoadData(&mod, &image[0]))
	runtime.KeepAlive(image)
	return smoke.Module(mod), err
}

// ModuleGetFunction calls cuModuleGetFunction.
func (d *Driver) ModuleGetFunction(mod smoke.Module, name string) (smoke.Function, error) {
	cname := cString(name)
	var fn uintptr
	err := d.check("cuModuleGetFunction", d.cuModuleGetFunction(&fn, uintptr(mod), &cname[0]))
	runtime.KeepAlive(cname)
	return smoke.Function(fn), err
}

// MemAlloc calls cuMemAlloc_v2.
func (d *Driver) MemAlloc(bytes uint64) (smoke.DevicePtr, error) {
	var ptr uint64
	err := d.check("cuMemAlloc_v2", d.cuMemAlloc(&ptr, bytes))
	return smoke.DevicePtr(ptr), err
}

// LaunchKernel calls cuLaunchKernel with kernelParams pointing at a copy of each argument.
func (d *Driver) LaunchKernel(fn smoke.Function, grid, block smoke.Dim3, args ...any) error {
	// cuLaunchKernel reads each parameter through kernelParams[i] while the call runs; the
	// values live in one Go allocation kept alive across the call.
	values := make([]uint64, len(args))
	params := make([]unsafe.Pointer, len(args)+1) // +1 so &params[0] exists for zero args
	for i, a := range args {
		switch v := a.(type) {
		case smoke.DevicePtr:
			values[i] = uint64(v)
		case uint64:
			values[i] = v
		case uint32:
			// A 4-byte parameter is read from the first 4 bytes: the low half on little-endian hosts.
			*(*uint32)(unsafe.Pointer(&values[i])) = v
		default:
			return fmt.Errorf("cuLaunchKernel: argument %d has unsupported type %T", i, a)
		}
		params[i] = unsafe.Pointer(&values[i])
	}
	code := d.cuLaunchKernel(uintptr(fn), grid.X, grid.Y, grid.Z, block.X, block.Y, block.Z, 0, 0, &params[0], nil)
	runtime.KeepAlive(values)
	runtime.KeepAlive(params)
	return d.check("cuLaunchKernel", code)
}

// CtxSynchronize calls cuCtxSynchronize.
func (d *Driver) CtxSynchronize() error { return d.check("cuCtxSynchronize", d.cuCtxSynchronize()) }

// MemcpyDtoH calls cuMemcpyDtoH_v2 into dst.
func (d *Driver) MemcpyDtoH(dst []byte, src smoke.DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	code := d.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst)))
	runtime.KeepAlive(dst)
	return d.check("cuMemcpyDtoH_v2", code)
}
