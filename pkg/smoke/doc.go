// Package smoke is the CUDA smoke proof a GPU pod runs before its GitHub runner registers: it
// proves the host can run the CUDA the workflow needs, so an incompatible host is rejected
// before any test is paid for. Command cuda-smoke (pkg/cmd/cuda-smoke) is its main.
//
// The steps, each printed as one line "[ok] step: detail (N ms)" or "[FAIL] step: reason":
//
//	environment      RUNNER_JIT_CONFIG is absent (the startup script strips it; this checks)
//	load-driver      libcuda.so.1 loads
//	driver-version   cuInit, cuDriverGetVersion ≥ the floor (--min-cuda, default 12.6)
//	tier             full if the driver reaches --full-tier (12.8), else baseline if it
//	                 reaches --baseline-tier (12.6), else fail
//	device           name, compute capability and memory of device 0
//	vram             memory ≥ --min-vram-gb, checked before any kernel work
//	context          the device's primary context, retained and made current
//	ptx-kernel       a magic-value kernel as PTX of the tier's ISA (12.6 → 8.5, 12.8 → 8.7;
//	                 see PTXISAFor) is loaded, launched, synchronized and read back
//	nvrtc-*          only if the tier has a pinned NVRTC package: download, SHA-256 check,
//	                 unpack into a private directory, load libnvrtc.so.N, version between the
//	                 tier and the driver, compile for the device, run the result like ptx-kernel
//	context-release  the primary context is released, on every path once it was retained
//
// The last line is "SMOKE PASS" (exit 0) or "SMOKE FAIL: <reason>" (exit 1), and a JSON Report
// goes to --report. The driver PTX load is the heart of the proof: hosts of the same GPU model
// carry different drivers, and a driver older than the toolchain refuses its PTX with
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
//
// The logic talks to CUDA only through the Driver and NVRTC interfaces: unit tests use fakes,
// package cudalib binds them to the real libraries with purego (no cgo), and package smoketest
// builds stand-in libraries from C for integration tests and the simulated cloud.
package smoke
