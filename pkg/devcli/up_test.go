package devcli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/sim/runpodsim"
)

func TestUpStartsTheCheapestOfferWithSSHAndTheAccountKeysUntouched(t *testing.T) {
	w := newWorld(t)
	r := w.run("up", "--name", "dev", "--gpus", "RTX4090:1", "--region", "europe")
	assert.Equal(t, r.code, ExitOK, r.stderr)

	pods := w.live()
	assert.Equal(t, len(pods), 1)
	p := pods[0]
	assert.Equal(t, p.Name, "dev")
	assert.Equal(t, p.Status, runpodsim.StatusRunning)
	assert.Equal(t, p.GPUTypeID, "NVIDIA GeForce RTX 4090")
	assert.Equal(t, p.DataCenterID, "EU-RO-1", "the cheapest European offer")
	assert.Equal(t, p.Cloud, runpodsim.Secure)
	assert.Equal(t, p.Image, DefaultImage)
	assert.Equal(t, p.Env["PUBLIC_KEY"], userPubKey+"\n"+accountKey, "the user's key plus the account's")
	user, dev := ownership.Developer(p.Env)
	assert.Check(t, dev && user == "alice")
	_, ciErr := ownership.FromPod(p.Name, p.Env)
	assert.Check(t, ciErr != nil, "never a CI pod")

	// The account's keys were read, never written.
	assert.DeepEqual(t, w.sim.SSHKeys(), []string{accountKey})
	reqs := w.requests()
	assert.Equal(t, reqs["GET /v2/account/ssh-keys"], 1)
	assert.Equal(t, reqs["PUT /v2/account/ssh-keys"], 0)
	assert.Equal(t, reqs["POST /v2/pods"], 1)
	// The offer read (both tiers) and the re-check right before the create.
	assert.Equal(t, reqs["GET /v2/catalog/gpus"], 3)

	// Progress: elapsed against the 15-minute budget, with the state.
	assert.Check(t, is.Contains(r.stderr, "offer: NVIDIA GeForce RTX 4090 x1 secure in EU-RO-1 (europe) at $0.69/hour"))
	assert.Check(t, is.Contains(r.stderr, "[0m00s / 15m00s] PROVISIONING"))
	assert.Check(t, is.Contains(r.stderr, "/ 15m00s] STARTING"))
	assert.Check(t, is.Contains(r.stderr, "/ 15m00s] RUNNING, SSH reachable"))
	assert.Check(t, is.Contains(r.stdout, "ssh -p "))
	assert.Check(t, is.Contains(r.stdout, "Host dev\n"))
	assert.Check(t, is.Contains(r.stdout, "runpod-gpu down dev"))

	// The pod's ports and ssh block, as RunPod shows them.
	ls := w.run("ls", "--json")
	assert.Equal(t, ls.code, ExitOK, ls.stderr)
	var views []podJSON
	assert.NilError(t, json.Unmarshal([]byte(ls.stdout), &views))
	assert.Equal(t, len(views), 1)
	assert.Check(t, views[0].SSHPort > 0 && views[0].SSHHost != "")
	assert.Check(t, is.Contains(r.stdout, views[0].SSHHost))
}

func TestUpJSONAndConfiguredImage(t *testing.T) {
	w := newWorld(t)
	assert.NilError(t, os.MkdirAll(filepath.Join(w.home, ".runpod"), 0o700))
	assert.NilError(t, os.WriteFile(filepath.Join(w.home, ".runpod", "config.toml"), []byte("[runpod]\nimage = \"runpod/pytorch:2.4\"\n"), 0o600))
	r := w.run("up", "--name", "j", "--gpus", "L4", "--json", "--disk", "80")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	var out upJSON
	assert.NilError(t, json.Unmarshal([]byte(r.stdout), &out))
	assert.Equal(t, out.InstanceType, "NVIDIA L4 x1 secure")
	assert.Equal(t, out.Pod.Name, "j")
	assert.Equal(t, out.Pod.Owner, "developer:alice")
	assert.Check(t, strings.HasPrefix(out.SSHCommand, "ssh -p "))
	assert.Check(t, is.Contains(out.SSHConfig, "User root"))
	assert.Equal(t, w.live()[0].Image, "runpod/pytorch:2.4")
}

func TestUpStaleOfferCreatesNothing(t *testing.T) {
	// Right after the offer is read, the cheapest data center's stock is gone.
	w := newWorld(t, runpodsim.WithFaults(runpodsim.Faults{StockChanges: []runpodsim.StockChange{{
		Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{Nth: []int{1}},
		DataCenterID: "EU-RO-1", GPUTypeID: "NVIDIA GeForce RTX 4090", Cloud: runpodsim.Secure,
	}}}))
	r := w.run("up", "--name", "dev", "--gpus", "RTX4090", "--region", "europe", "--cloud", "secure")
	assert.Equal(t, r.code, ExitNoCapacity, r.stderr)
	assert.Check(t, is.Contains(r.stderr, "stale offer: NVIDIA GeForce RTX 4090 x1 secure is no longer in stock in EU-RO-1; nothing was created"))
	assert.Equal(t, w.requests()["POST /v2/pods"], 0)
	assert.Equal(t, len(w.sim.Pods()), 0)
}

func TestUpCapacityGoneAtTheCreateCreatesNothing(t *testing.T) {
	// The re-check still shows stock; the create finds none (taken in between).
	w := newWorld(t, runpodsim.WithFaults(runpodsim.Faults{StockChanges: []runpodsim.StockChange{{
		Match: runpodsim.Match{Route: "GET /v2/catalog/gpus"}, When: runpodsim.Trigger{Nth: []int{2}},
		DataCenterID: "EU-RO-1", GPUTypeID: "NVIDIA GeForce RTX 4090", Cloud: runpodsim.Secure,
	}}}))
	r := w.run("up", "--name", "dev", "--gpus", "RTX4090", "--region", "europe", "--cloud", "secure")
	assert.Equal(t, r.code, ExitNoCapacity, r.stderr)
	assert.Check(t, is.Contains(r.stderr, "nothing was created"))
	assert.Equal(t, len(w.sim.Pods()), 0)
}

func TestUpBootFailureDeletesThePod(t *testing.T) {
	slow := testMarket()
	for i := range slow.Hosts {
		slow.Hosts[i].BootSeconds = int((16 * time.Minute).Seconds())
	}
	for _, tc := range []struct {
		name string
		opts []runpodsim.Option
		want string
	}{
		{"dies while booting", []runpodsim.Option{runpodsim.WithFaults(runpodsim.Faults{DieDuringBoot: runpodsim.Trigger{First: 1}})}, "ended in ERROR while booting"},
		{"past the 15-minute budget", []runpodsim.Option{runpodsim.WithMarket(slow)}, "did not boot within 15m0s (last state STARTING)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.opts...)
			start := w.clock.Now()
			r := w.run("up", "--name", "dev", "--gpus", "A4000")
			assert.Equal(t, r.code, ExitBootFailed, r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.want))
			assert.Check(t, is.Contains(r.stderr, "was deleted"))
			assert.Equal(t, len(w.sim.Pods()), 1)
			assert.Equal(t, len(w.live()), 0, "the failed pod is deleted")
			assert.Check(t, w.clock.Now().Sub(start) <= BootBudget+time.Minute, "bounded by the boot budget")
		})
	}
}

func TestUpLostCreateAnswerFindsThePodByName(t *testing.T) {
	w := newWorld(t, runpodsim.WithFaults(runpodsim.Faults{LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{First: 1}}}}))
	r := w.run("up", "--name", "dev", "--gpus", "L4")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, is.Contains(r.stderr, "the create answer was lost"))
	assert.Equal(t, w.requests()["POST /v2/pods"], 1, "never a second POST")
	assert.Equal(t, len(w.live()), 1)
}

// After a lost create answer, up looks the pod up by name for as long as the
// list may lag (bounded): it finds a pod the list shows late, and when none
// shows up in time it never says nothing was created: a pod may still bill.
func TestUpLostCreateAnswerWaitsOutTheListsLag(t *testing.T) {
	tests := []struct {
		name     string
		lag      time.Duration
		wantCode int
		wantErr  string
	}{
		{name: "the list shows the pod after a minute", lag: time.Minute, wantCode: ExitOK},
		{name: "the list never shows it in time", lag: CreateLookupBudget + time.Minute, wantCode: ExitUnconfirmed,
			wantErr: "no pod named dev showed up in the pod list within 15m0s, but the pod may still exist and bill: check runpod-gpu ls and delete it with runpod-gpu down dev"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, runpodsim.WithFaults(runpodsim.Faults{ListingDelay: tc.lag,
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{First: 1}}}}))
			start := w.clock.Now()
			r := w.run("up", "--name", "dev", "--gpus", "L4")
			assert.Equal(t, r.code, tc.wantCode, r.stderr)
			assert.Check(t, is.Contains(r.stderr, "the create answer was lost"))
			assert.Check(t, !strings.Contains(r.stderr, "nothing was created"), r.stderr)
			assert.Equal(t, w.requests()["POST /v2/pods"], 1, "never a second POST")
			assert.Equal(t, len(w.live()), 1, "the pod exists either way")
			if tc.wantErr != "" {
				assert.Check(t, is.Contains(r.stderr, tc.wantErr))
				assert.Check(t, w.clock.Now().Sub(start) <= CreateLookupBudget+time.Minute, "the lookup is bounded")
			}
		})
	}
}

// TestUpFindsALostCreateWithALaggingListing: a list that shows the pod ten
// minutes late (the old fixed window was two) still finds it, and up says
// how long it will look before it starts; --lookup-for shortens it.
func TestUpFindsALostCreateWithALaggingListing(t *testing.T) {
	tests := []struct {
		name     string
		lag      time.Duration
		args     []string
		wantCode int
		wantErr  string
		within   time.Duration
	}{
		{name: "ten minutes late, the default bound", lag: 10 * time.Minute, wantCode: ExitOK,
			wantErr: "looking the pod up by name for up to 15m0s, as RunPod's pod list can lag a create (--lookup-for changes it)"},
		{name: "a shorter bound given", lag: 10 * time.Minute, args: []string{"--lookup-for", "5m"}, wantCode: ExitUnconfirmed,
			wantErr: "no pod named dev showed up in the pod list within 5m0s", within: 6 * time.Minute},
		{name: "fourteen minutes late", lag: 14 * time.Minute, wantCode: ExitOK, wantErr: "for up to 15m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, runpodsim.WithFaults(runpodsim.Faults{ListingDelay: tc.lag,
				LostCreates: []runpodsim.LostCreateFault{{When: runpodsim.Trigger{First: 1}}}}))
			start := w.clock.Now()
			r := w.run(append([]string{"up", "--name", "dev", "--gpus", "L4"}, tc.args...)...)
			assert.Equal(t, r.code, tc.wantCode, r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.wantErr))
			assert.Equal(t, w.requests()["POST /v2/pods"], 1, "never a second POST")
			if tc.within > 0 {
				assert.Check(t, w.clock.Now().Sub(start) <= tc.within, "the lookup is bounded")
			}
		})
	}
	w := newWorld(t)
	for _, bad := range []string{"10s", "16m"} {
		r := w.run("up", "--name", "dev", "--gpus", "L4", "--lookup-for", bad)
		assert.Check(t, is.Equal(r.code, ExitUsage))
		assert.Check(t, is.Contains(r.stderr, "--lookup-for "))
		assert.Check(t, is.Contains(r.stderr, "want 1m0s to 15m0s"))
	}
	assert.Equal(t, len(w.live()), 0, "a refused flag creates nothing")
}

func TestUpRefusals(t *testing.T) {
	w := newWorld(t)
	assert.Equal(t, w.run("up", "--name", "dev", "--gpus", "L4").code, ExitOK)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"name in use", []string{"--name", "dev", "--gpus", "L4"}, ExitUsage, `a pod named "dev" already exists`},
		{"bad name", []string{"--name", "-x", "--gpus", "L4"}, ExitUsage, `--name "-x": want 1-64 letters`},
		{"no name", []string{"--gpus", "L4"}, ExitUsage, `required flag(s) "name" not set`},
		{"bad disk", []string{"--name", "d2", "--gpus", "L4", "--disk", "0"}, ExitUsage, "--disk 0"},
		{"disk past the lane's cap", []string{"--name", "d3", "--gpus", "L4", "--disk", "1025"}, ExitUsage, "--disk 1025: want a container disk of 1 to 1024 GB"},
		{"image with a command substitution", []string{"--name", "d4", "--gpus", "L4", "--image", "$(id)"}, ExitUsage,
			`--image "$(id)": want an image reference [registry/]path[:tag][@sha256:<64 hex>]`},
		{"image with a newline", []string{"--name", "d4", "--gpus", "L4", "--image", "runpod/pytorch\nid"}, ExitUsage, `--image "runpod/pytorch\nid": want an image reference`},
		{"image as a URL", []string{"--name", "d4", "--gpus", "L4", "--image", "http://evil.example/x"}, ExitUsage, `--image "http://evil.example/x": want an image reference`},
		{"private key given", []string{"--name", "d2", "--gpus", "L4", "--ssh-key", filepath.Join(w.home, ".ssh", "id_ed25519")}, ExitUsage, "--ssh-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.run(append([]string{"up"}, tc.args...)...)
			assert.Equal(t, r.code, tc.code, r.stderr)
			assert.Check(t, is.Contains(r.stderr, tc.want))
		})
	}
	assert.Equal(t, len(w.sim.Pods()), 1)
}

func TestUpNeedsSomeSSHKey(t *testing.T) {
	// An account without keys, and a user without a key file.
	w := newWorld(t, runpodsim.WithSSHKeys())
	assert.NilError(t, os.Remove(filepath.Join(w.home, ".ssh", "id_ed25519.pub")))
	r := w.run("up", "--name", "dev", "--gpus", "L4")
	assert.Equal(t, r.code, ExitUsage)
	assert.Check(t, is.Contains(r.stderr, "no SSH public key"))
	assert.Equal(t, len(w.sim.Pods()), 0)

	// The account's keys alone will do.
	w2 := newWorld(t)
	assert.NilError(t, os.Remove(filepath.Join(w2.home, ".ssh", "id_ed25519.pub")))
	assert.Equal(t, w2.run("up", "--name", "dev", "--gpus", "L4").code, ExitOK)
	assert.Equal(t, w2.live()[0].Env["PUBLIC_KEY"], accountKey)
}
