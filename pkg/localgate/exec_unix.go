//go:build unix

package localgate

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel puts c in a new process group and makes cancellation
// kill the whole group.
func killGroupOnCancel(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
}
