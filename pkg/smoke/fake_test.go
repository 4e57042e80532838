package smoke_test

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/smoke"
)

// fakeDriver is an in-memory smoke.Driver: a device of the configured version, capability and
// memory whose JIT accepts PTX up to maxISA and whose magic kernel really computes its result.
type fakeDriver struct {
	version  int
	cc       smoke.ComputeCapability
	vram     uint64
	maxISA   smoke.ISA
	readBack func(correct uint32) uint32 // what the kernel writes; nil writes the correct value

	// failCall makes the named method return failWith.
	failCall string
	failWith smoke.Result

	calls    []string
	retained int
	current  smoke.Context
	modules  []smoke.PTXHeader
	memory   [][]byte
}

func newFakeDriver() *fakeDriver {
	return &fakeDriver{version: 12080, cc: smoke.ComputeCapability{Major: 8, Minor: 9}, vram: 24564 << 20, maxISA: smoke.ISA{Major: 8, Minor: 7}}
}

func (d *fakeDriver) enter(call string) error {
	d.calls = append(d.calls, call)
	if call == d.failCall {
		return &smoke.CallError{Call: call, Err: d.failWith}
	}
	return nil
}

func (d *fakeDriver) called(call string) bool { return slices.Contains(d.calls, call) }

func (d *fakeDriver) needContext() error {
	if d.current == 0 || d.retained == 0 {
		return smoke.ErrorInvalidContext
	}
	return nil
}

func (d *fakeDriver) Init() error { return d.enter("Init") }

func (d *fakeDriver) DriverGetVersion() (int, error) { return d.version, d.enter("DriverGetVersion") }

func (d *fakeDriver) DeviceGet(ordinal int) (smoke.Device, error) {
	return smoke.Device(ordinal), d.enter("DeviceGet")
}

func (d *fakeDriver) DeviceGetName(smoke.Device) (string, error) {
	return "Fake GPU\nwith a newline", d.enter("DeviceGetName")
}

func (d *fakeDriver) DeviceGetAttribute(attr smoke.DeviceAttribute, _ smoke.Device) (int, error) {
	if err := d.enter("DeviceGetAttribute"); err != nil {
		return 0, err
	}
	switch attr {
	case smoke.AttrComputeCapabilityMajor:
		return d.cc.Major, nil
	case smoke.AttrComputeCapabilityMinor:
		return d.cc.Minor, nil
	}
	return 0, smoke.ErrorInvalidValue
}

func (d *fakeDriver) DeviceTotalMem(smoke.Device) (uint64, error) {
	return d.vram, d.enter("DeviceTotalMem")
}

func (d *fakeDriver) PrimaryCtxRetain(smoke.Device) (smoke.Context, error) {
	if err := d.enter("PrimaryCtxRetain"); err != nil {
		return 0, err
	}
	d.retained++
	return smoke.Context(1), nil
}

func (d *fakeDriver) PrimaryCtxRelease(smoke.Device) error {
	if err := d.enter("PrimaryCtxRelease"); err != nil {
		return err
	}
	if d.retained == 0 {
		return smoke.ErrorInvalidContext
	}
	d.retained--
	return nil
}

func (d *fakeDriver) CtxSetCurrent(ctx smoke.Context) error {
	if err := d.enter("CtxSetCurrent"); err != nil {
		return err
	}
	d.current = ctx
	return nil
}

func (d *fakeDriver) ModuleLoadData(ptx string) (smoke.Module, error) {
	if err := d.enter("ModuleLoadData"); err != nil {
		return 0, err
	}
	if err := d.needContext(); err != nil {
		return 0, err
	}
	h, err := smoke.ParsePTXHeader(ptx)
	if err != nil {
		return 0, &smoke.CallError{Call: "cuModuleLoadData", Err: smoke.ErrorInvalidPTX}
	}
	if !d.maxISA.AtLeast(h.ISA) {
		return 0, &smoke.CallError{Call: "cuModuleLoadData", Err: smoke.ErrorUnsupportedPTXVersion,
			Message: "the provided PTX was compiled with an unsupported toolchain."}
	}
	if !d.cc.AtLeast(h.TargetCC) {
		return 0, &smoke.CallError{Call: "cuModuleLoadData", Err: smoke.ErrorNoBinaryForGPU}
	}
	d.modules = append(d.modules, h)
	return smoke.Module(len(d.modules)), nil
}

func (d *fakeDriver) ModuleGetFunction(mod smoke.Module, name string) (smoke.Function, error) {
	if err := d.enter("ModuleGetFunction"); err != nil {
		return 0, err
	}
	if int(mod) < 1 || int(mod) > len(d.modules) || name != smoke.KernelName {
		return 0, smoke.ErrorNotFound
	}
	return smoke.Function(mod), nil
}

func (d *fakeDriver) MemAlloc(bytes uint64) (smoke.DevicePtr, error) {
	if err := d.enter("MemAlloc"); err != nil {
		return 0, err
	}
	d.memory = append(d.memory, make([]byte, bytes))
	return smoke.DevicePtr(len(d.memory)), nil
}

func (d *fakeDriver) LaunchKernel(fn smoke.Function, grid, block smoke.Dim3, args ...any) error {
	if err := d.enter("LaunchKernel"); err != nil {
		return err
	}
	if err := d.needContext(); err != nil {
		return err
	}
	if len(args) != 2 || fn == 0 {
		return fmt.Errorf("fake: bad launch of %d with %d arguments", fn, len(args))
	}
	out, ok1 := args[0].(smoke.DevicePtr)
	in, ok2 := args[1].(uint32)
	if !ok1 || !ok2 {
		return fmt.Errorf("fake: bad launch argument types %T, %T", args[0], args[1])
	}
	value := smoke.ExpectedReadBack(in)
	if d.readBack != nil {
		value = d.readBack(value)
	}
	binary.NativeEndian.PutUint32(d.memory[out-1], value)
	return nil
}

func (d *fakeDriver) CtxSynchronize() error { return d.enter("CtxSynchronize") }

func (d *fakeDriver) MemcpyDtoH(dst []byte, src smoke.DevicePtr) error {
	if err := d.enter("MemcpyDtoH"); err != nil {
		return err
	}
	copy(dst, d.memory[src-1])
	return nil
}

// fakeNVRTC compiles the magic kernel into PTX of its version's ISA for the requested
// architecture.
type fakeNVRTC struct {
	version smoke.Version
	options []string
}

func (n *fakeNVRTC) Version() (smoke.Version, error) { return n.version, nil }

func (n *fakeNVRTC) Compile(source, name string, options []string) (string, error) {
	n.options = options
	if !strings.Contains(source, smoke.KernelName) || len(options) != 1 {
		return "", fmt.Errorf("fake: unexpected compile of %s with %q", name, options)
	}
	var sm int
	if _, err := fmt.Sscanf(options[0], "--gpu-architecture=compute_%d", &sm); err != nil {
		return "", err
	}
	isa, err := smoke.PTXISAFor(n.version)
	if err != nil {
		return "", err
	}
	return smoke.KernelPTX(isa, smoke.ComputeCapability{Major: sm / 10, Minor: sm % 10}), nil
}
