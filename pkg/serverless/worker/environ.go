package worker

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// keptNames and keptPrefixes are the worker's own environment: the paths and
// the CUDA driver's and container toolkit's settings (and the driver
// stand-in's in tests), the same set the handler passes it (handler.py).
var (
	keptNames    = []string{"PATH", "LD_LIBRARY_PATH", "HOME", "TMPDIR"}
	keptPrefixes = []string{"CUDA_", "NVIDIA_", "SIM_CUDA_"}
)

// CleanEnviron splits environ into what the worker keeps and the names of
// what it drops (RunPod's RUNPOD_* keys and webhooks, the bootstrap's RPG_*,
// anything else).
func CleanEnviron(environ []string) (kept, dropped []string) {
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		keep := false
		for _, n := range keptNames {
			keep = keep || name == n
		}
		for _, p := range keptPrefixes {
			keep = keep || strings.HasPrefix(name, p)
		}
		if keep {
			kept = append(kept, kv)
		} else {
			dropped = append(dropped, name)
		}
	}
	return kept, dropped
}

// Execer replaces the running program, as syscall.Exec does.
type Execer func(argv0 string, argv, envv []string) error

// StartClean is ExecClean for this process, called first thing in main:
// no key of the handler's or RunPod's stays in the initial environment the
// tests (its children) can read.
func StartClean() error {
	return ExecClean("/proc/self/exe", os.Args, os.Environ(), syscall.Exec)
}

// ExecClean re-executes the program (self, normally /proc/self/exe) with
// only the variables CleanEnviron keeps, when its environment holds any
// other. The tests are this process's children, and Linux shows a process's
// initial environment in /proc/<pid>/environ whatever it unsets later, so
// only a fresh exec takes the keys out of what the tests can read as their
// parent's. It returns nil, without exec, when there is nothing to drop.
func ExecClean(self string, args, environ []string, exec Execer) error {
	kept, dropped := CleanEnviron(environ)
	if len(dropped) == 0 {
		return nil
	}
	if err := exec(self, args, kept); err != nil {
		return fmt.Errorf("re-executing without %d environment variables (%s): %w", len(dropped), strings.Join(dropped, ", "), err)
	}
	return nil
}
