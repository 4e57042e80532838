package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// maxProofBytes is the proof's size target : every pod downloads
// it in the paid window before its runner can register.
const maxProofBytes = 3 << 20

// TestProofStaysSmall builds the proof as the release does (CGO_ENABLED=0,
// -trimpath, -ldflags "-s -w") and checks its size and that no HTTP or TLS
// stack is linked in (NVRTC packages are fetched with curl): net/http and
// crypto/tls were half of the former 6.6 MB.
func TestProofStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the proof")
	}
	deps, err := exec.Command("go", "list", "-deps", ".").Output()
	assert.NilError(t, err)
	for _, heavy := range []string{"net/http", "crypto/tls", "crypto/x509", "net"} {
		for _, dep := range strings.Fields(string(deps)) {
			assert.Check(t, dep != heavy, "the proof imports %s", heavy)
		}
	}
	out := filepath.Join(t.TempDir(), "cuda-smoke")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	msg, err := build.CombinedOutput()
	assert.NilError(t, err, "%s", msg)
	info, err := os.Stat(out)
	assert.NilError(t, err)
	t.Logf("proof: %d bytes", info.Size())
	assert.Check(t, info.Size() <= maxProofBytes, "the proof is %d bytes; want at most %d", info.Size(), maxProofBytes)
}
