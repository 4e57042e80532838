package provision

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
	"github.com/org/runpod-gpu/pkg/startup"
)

// KeptPod is a retained pod a maintainer can enter over SSH.
type KeptPod struct {
	ID string
	// PerHour is the highest price known for it; 0 when unknown.
	PerHour money.Rate
	// CreatedAt is when its create was answered, from which the reaper's
	// retention cap counts its activity (at the latest).
	CreatedAt time.Time
}

// openDebugSSH makes a create request's pod one a maintainer can enter once
// its tests have ended: 22/tcp published, the key in PUBLIC_KEY, and the
// startup script wrapped so sshd starts only after it (and the runner's job)
// ended. Without a key, or without keep-failed-pods, the request is unchanged.
func (r *run) openDebugSSH(body *runpod.CreatePodRequest) {
	if r.req.DebugSSHKey == "" || !r.req.KeepFailedPods || len(body.Cmd) != 1 {
		return
	}
	body.Ports = []string{startup.SSHPort}
	body.Env[startup.DebugKeyEnv] = r.req.DebugSSHKey
	body.Cmd = startup.WithDebugShell(body.Cmd[0])
}

// keepForSSH records a retained pod for the summary's connect line.
func (r *run) keepForSSH(id string, perHour money.Rate, at time.Time) {
	if r.req.DebugSSHKey != "" {
		r.res.Kept = append(r.res.Kept, KeptPod{ID: id, PerHour: perHour, CreatedAt: at})
	}
}

// keptSummary tells the maintainer how to enter each kept pod, what it bills
// and when the reaper deletes it (its default retention cap).
func keptSummary(kept []KeptPod) string {
	var b strings.Builder
	capHours := ownership.DefaultRetentionCap.Hours()
	for _, k := range kept {
		fmt.Fprintf(&b, "\n- Enter pod `%s` with `runpod-gpu ssh %s` (once its tests have ended, sshd lets the debug-ssh-public-key in). ", k.ID, k.ID)
		if k.PerHour > 0 {
			price := k.PerHour
			fmt.Fprintf(&b, "It bills %s until deleted: up to %s over the reaper's %.0f h retention cap. ", price.Format(money.Cents),
				spend.Retained(price, ownership.DefaultRetentionCap), capHours)
		} else {
			b.WriteString("Its price is unknown; it bills until deleted. ")
		}
		fmt.Fprintf(&b, "The reaper deletes it at its first sweep after %s (%.0f h after its create; a reap workflow's retention-cap-hours may set another); `runpod-gpu down %s --force` ends it sooner.\n",
			k.CreatedAt.Add(ownership.DefaultRetentionCap).UTC().Format(time.RFC3339), capHours, k.ID)
	}
	return b.String()
}

// sshKeyTypes are the OpenSSH public key types a kept pod's sshd accepts.
var sshKeyTypes = map[string]bool{
	"ssh-ed25519": true, "ssh-rsa": true, "ecdsa-sha2-nistp256": true, "ecdsa-sha2-nistp384": true,
	"ecdsa-sha2-nistp521": true, "sk-ssh-ed25519@openssh.com": true, "sk-ecdsa-sha2-nistp256@openssh.com": true,
}

// DebugKeyError says why a debug-ssh-public-key value is refused; it quotes
// only the key's type, never the key.
type DebugKeyError struct{ Reason string }

func (e *DebugKeyError) Error() string {
	return "debug-ssh-public-key: " + e.Reason
}

// ParseDebugSSHKey checks a maintainer's OpenSSH public key ("TYPE BASE64
// [comment]", one line) and returns it as "TYPE BASE64", the comment
// dropped. event is the workflow's event payload: a key whose blob appears in
// it came from text a pull request's author controls (a PR body, a branch
// name, a commit message) and is refused — the key must come from a
// repository variable or secret, which only maintainers set.
func ParseDebugSSHKey(key string, event []byte) (string, error) {
	key = strings.TrimSpace(key)
	if strings.ContainsAny(key, "\r\n") {
		return "", &DebugKeyError{Reason: "holds more than one line: want one OpenSSH public key, e.g. ssh-ed25519 AAAAC3… maintainer@host"}
	}
	fields := strings.Fields(key)
	if len(fields) < 2 {
		return "", &DebugKeyError{Reason: "is not an OpenSSH public key: want TYPE BASE64 [comment], e.g. ssh-ed25519 AAAAC3… maintainer@host"}
	}
	typ, blob := fields[0], fields[1]
	if !sshKeyTypes[typ] {
		return "", &DebugKeyError{Reason: fmt.Sprintf("key type %.40q is not one sshd accepts: want ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256/384/521 or a security-key type", typ)}
	}
	raw, err := base64.StdEncoding.DecodeString(blob)
	if err != nil {
		return "", &DebugKeyError{Reason: "the key's second field is not base64: want the key as ssh-keygen writes it (*.pub)"}
	}
	// The blob must be a whole key of its stated type (RFC 4253 6.6), as sshd
	// reads it: a blob of the type alone, or cut short, lets nobody in.
	if key, err := ssh.ParsePublicKey(raw); err != nil || key.Type() != typ {
		return "", &DebugKeyError{Reason: fmt.Sprintf("the key's data does not hold a %s key: want the key as ssh-keygen writes it (*.pub)", typ)}
	}
	if len(event) > 0 && bytes.Contains(event, []byte(blob)) {
		return "", &DebugKeyError{Reason: "the key appears in this run's event payload, which a pull request's author can write: pass a maintainer's key from a repository variable or secret (vars.* or secrets.*), never from the event"}
	}
	return typ + " " + blob, nil
}
