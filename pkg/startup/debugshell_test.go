package startup

import (
	"os/exec"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestWithDebugShellInstallsTheKeyOnlyAfterTheScript(t *testing.T) {
	script := "echo 'the proof'; exit 3"
	cmd := WithDebugShell(script)
	assert.Assert(t, is.Len(cmd, 1))
	assert.Check(t, ServesSSH(cmd))
	assert.Check(t, !ServesSSH(Cmd(script)), "a plain script serves no SSH")
	body := cmd[0]
	run, key, sshd := strings.Index(body, "/bin/bash -c "+Quote(script)), strings.Index(body, "authorized_keys"), strings.Index(body, "exec /usr/sbin/sshd")
	assert.Check(t, run > 0 && key > run && sshd > key, "script, then the key, then sshd:\n%s", body)
	if _, err := exec.LookPath("bash"); err == nil {
		out, err := exec.Command("bash", "-n", "-c", body).CombinedOutput()
		assert.NilError(t, err, "bash -n: %s", out)
	}
}
