package smoke

import (
	"errors"
	"fmt"
)

// Sentinel errors a caller can test with errors.Is on the error Proof.Run returns.
var (
	// ErrJITConfigPresent means RUNNER_JIT_CONFIG reached the proof: the startup script must strip it.
	ErrJITConfigPresent = errors.New("RUNNER_JIT_CONFIG is set; the proof must run without the runner's JIT config (env -u RUNNER_JIT_CONFIG)")
	// ErrLibraryMissing means a shared library (libcuda.so.1, libnvrtc.so.N) could not be loaded.
	ErrLibraryMissing = errors.New("library not loadable")
	// ErrSymbolMissing means a loaded library lacks an entry point the proof calls.
	ErrSymbolMissing = errors.New("library lacks a required symbol")
	// ErrDriverBelowFloor means the driver's CUDA API version is older than the configured floor.
	ErrDriverBelowFloor = errors.New("driver CUDA version below the floor")
	// ErrNoRuntimeTier means the driver is older than the baseline runtime tier.
	ErrNoRuntimeTier = errors.New("driver CUDA version below every runtime tier")
	// ErrDeviceUnsupported means the device has no portable PTX target (compute capability < 5.0).
	ErrDeviceUnsupported = errors.New("device not supported")
	// ErrVRAMBelowMinimum means the device has less memory than the configured minimum.
	ErrVRAMBelowMinimum = errors.New("device memory below the minimum")
	// ErrReadBackMismatch means the kernel ran but the value read back is not the one it writes.
	ErrReadBackMismatch = errors.New("kernel read-back mismatch")
	// ErrChecksumMismatch means a downloaded NVRTC package does not have its pinned SHA-256.
	ErrChecksumMismatch = errors.New("NVRTC package checksum mismatch")
	// ErrNVRTCTooOld means the NVRTC package is older than the selected runtime tier.
	ErrNVRTCTooOld = errors.New("NVRTC older than the runtime tier")
	// ErrNVRTCNewerThanDriver means NVRTC would emit PTX newer than the driver can load.
	ErrNVRTCNewerThanDriver = errors.New("NVRTC newer than the driver")
)

// StepError is the failure of one proof step; Step names it as the output and report do.
type StepError struct {
	Step string
	Err  error
}

// Error returns "step: cause".
func (e *StepError) Error() string { return e.Step + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *StepError) Unwrap() error { return e.Err }

// ConfigError is a flag or environment value the proof cannot use.
type ConfigError struct {
	// Flag is the flag name without dashes; Env the matching environment variable.
	Flag, Env string
	// Value is the rejected value (never a secret: the proof takes none).
	Value string
	// Want says what is expected.
	Want string
}

// Error names the flag, its variable, the value and what is expected.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("--%s (%s) %q: %s", e.Flag, e.Env, e.Value, e.Want)
}
