package devcli

import (
	"context"
	"errors"
	"fmt"
	"github.com/org/runpod-gpu/pkg/config"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/inputform"
	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// BootBudget is how long up waits for a pod to run with SSH reachable: pods
// can take several minutes to pull a large image.
const BootBudget = 15 * time.Minute

// DefaultPoll is how often up reads the pod while it boots.
const DefaultPoll = 5 * time.Second

var podNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// defaultKeys are the public keys up looks for when --ssh-key is not given.
var defaultKeys = []string{"id_ed25519.pub", "id_ecdsa.pub", "id_rsa.pub"}

var publicKeyRE = regexp.MustCompile(`^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) [A-Za-z0-9+/=]+( .*)?$`)

type upFlags struct {
	offerFlags
	name   string
	image  string
	disk   int
	sshKey string
	poll   time.Duration
	asJSON bool
	// lookupFor bounds the lookup of a pod whose create answer was lost.
	lookupFor time.Duration
}

// upJSON is what up --json prints once the pod is reachable.
type upJSON struct {
	InstanceType string  `json:"instance_type"`
	Pod          podJSON `json:"pod"`
	SSHCommand   string  `json:"ssh_command"`
	SSHConfig    string  `json:"ssh_config"`
}

func (a *app) upCmd() *cobra.Command {
	var f upFlags
	cmd := &cobra.Command{
		Use:   "up --name NAME --gpus NAME[:COUNT] [--region R]… [--zone Z]… [--image IMAGE] [--disk GB]",
		Short: "Start a pod on the cheapest offer and wait until SSH works",
		Long: `up picks the cheapest offer (as offers lists them), re-checks that data
center's stock right before creating the pod (a stale offer fails and
creates nothing, exit 3), and creates the pod with 22/tcp published and
PUBLIC_KEY set to your public key plus the keys registered on your RunPod
account (read only: the account's key list is never changed). It waits up
to 15 minutes for the pod to run, showing elapsed time and state, then
prints how to connect. A pod that fails to boot is deleted (exit 4).

The pod is tagged as a developer pod: the CI reaper never touches it, so
delete it yourself with runpod-gpu down.

Refused, with the reason: --port (pod ports are published on random public
ports), --spot (the REST API has no interruptible pods), --k8s (pods are
containers without systemd). Disk (--disk) is the container disk, wiped if
the pod restarts.`,
		Example: `  runpod-gpu up --name dev --gpus RTX4090:1
  runpod-gpu up --name big --gpus H100:8 --region north_america
  runpod-gpu up --name eu --gpus L40S --zone EU-NL-1 --image runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.up(cmd, f) },
	}
	f.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.name, "name", "", "pod name, unique among your live pods (required)")
	fl.StringVar(&f.image, "image", "", "container image; default [runpod] image in ~/.runpod/config.toml, else "+DefaultImage)
	fl.IntVar(&f.disk, "disk", 50, "container disk in GB (wiped if the pod restarts)")
	fl.StringVar(&f.sshKey, "ssh-key", "", "your public key file; default ~/.ssh/id_ed25519.pub, id_ecdsa.pub or id_rsa.pub")
	fl.DurationVar(&f.poll, "poll", DefaultPoll, "how often to read the pod while it boots")
	fl.BoolVar(&f.asJSON, "json", false, "print the pod and how to connect as JSON")
	fl.DurationVar(&f.lookupFor, "lookup-for", CreateLookupBudget, "after a lost create answer, how long to look for the pod in RunPod's pod list, which can lag a create")
	_ = fl.MarkHidden("poll")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (a *app) up(cmd *cobra.Command, f upFlags) error {
	ctx := cmd.Context()
	q, err := f.parse(cmd)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	userKey, err := a.userKey(f.sshKey)
	if err != nil {
		return err
	}
	if err := a.connect(); err != nil { // reads the configuration; no request yet
		return err
	}
	image, err := a.upImage(f.image)
	if err != nil {
		return err
	}

	if err := a.checkNameFree(ctx, f.name); err != nil {
		return err
	}
	keys, err := a.publicKeys(ctx, userKey)
	if err != nil {
		return err
	}

	o, err := a.cheapestInStock(ctx, q)
	if err != nil {
		return err
	}

	env := ownership.DeveloperEnv(a.env.User)
	env["PUBLIC_KEY"] = strings.Join(keys, "\n")
	req := runpod.CreatePodRequest{
		Name: f.name, Image: image, GPU: &runpod.CreateGPU{ID: o.GPUID, Count: o.GPUCount},
		Cloud: o.Cloud, DataCenterIDs: []string{o.DataCenterID}, Disk: f.disk,
		Ports: []string{"22/tcp"}, Env: env,
	}
	created := a.env.Clock.Now()
	pod, err := a.create(ctx, req, f.lookupFor)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stderr, "pod %s (%s) created; waiting up to %s for it to boot\n", terminalSafe(pod.ID), terminalSafe(pod.Name), BootBudget)
	ready, err := a.waitBoot(ctx, pod, created, f.poll)
	if err != nil {
		return a.abandon(ctx, pod, err)
	}
	return a.printReady(ready, o, f.asJSON)
}

// check refuses flags up cannot use, before any call.
func (f upFlags) check() error {
	switch {
	case !podNameRE.MatchString(f.name):
		return fail(ExitUsage, "--name %q: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", f.name)
	case f.disk < 1 || f.disk > config.MaxDiskGB: // the lane's cap: a mistyped size bills storage
		return fail(ExitUsage, "--disk %d: want a container disk of 1 to %d GB", f.disk, config.MaxDiskGB)
	case f.poll <= 0:
		return fail(ExitUsage, "--poll %s: want a positive duration", f.poll)
	case f.lookupFor < MinCreateLookup || f.lookupFor > MaxCreateLookup:
		return fail(ExitUsage, "--lookup-for %s: want %s to %s, how long to look for a pod whose create answer was lost", f.lookupFor, MinCreateLookup, MaxCreateLookup)
	}
	return nil
}

// upImage is the image up starts: --image, else the configured one, else
// DefaultImage; checked as an image reference before anything is asked of
// RunPod (a "$(id)", a newline or a URL is no image, and would bill a pod).
func (a *app) upImage(flag string) (string, error) {
	image, from := flag, "--image"
	if image == "" {
		image, from = a.cfg.Runpod.Image, "~/.runpod/config.toml [runpod] image"
	}
	if image == "" {
		return DefaultImage, nil
	}
	if err := inputform.Check(inputform.Image, image); err != nil {
		return "", fail(ExitUsage, "%s %v", from, err)
	}
	return image, nil
}

// checkNameFree refuses a name a live pod already has.
func (a *app) checkNameFree(ctx context.Context, name string) error {
	pods, err := a.listPods(ctx)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.Name == name && p.Status != runpod.PodTerminated {
			return fail(ExitUsage, "a pod named %q already exists (%s, %s): pick another --name, or runpod-gpu down %s", name, p.ID, p.Status, p.ID)
		}
	}
	return nil
}

// cheapestInStock picks the cheapest offer for q and checks, right before
// the create, that it is still in stock.
func (a *app) cheapestInStock(ctx context.Context, q query) (plan.DCOffer, error) {
	set, err := a.readOffers(ctx, q)
	if err != nil {
		return plan.DCOffer{}, err
	}
	if len(set.offers) == 0 {
		return plan.DCOffer{}, errNoOffer(q, set)
	}
	return a.takeOffer(ctx, set.offers[0])
}

// takeOffer prints the offer a create will use and re-checks its stock.
func (a *app) takeOffer(ctx context.Context, o plan.DCOffer) (plan.DCOffer, error) {
	fmt.Fprintf(a.env.Stderr, "offer: %s in %s (%s) at %s/hour\n", terminalSafe(o.InstanceType()), terminalSafe(o.DataCenterID), terminalSafe(orDash(o.Region)), o.PricePerHour.Hourly())
	// Stock changes minute to minute: the offer is re-checked right before the create.
	ok, err := a.stillInStock(ctx, o)
	if err != nil {
		return plan.DCOffer{}, err
	}
	if !ok {
		return plan.DCOffer{}, fail(ExitNoCapacity, "stale offer: %s is no longer in stock in %s; nothing was created. Run runpod-gpu offers again", o.InstanceType(), o.DataCenterID)
	}
	return o, nil
}

// printReady prints how to reach the running pod, as JSON with asJSON.
func (a *app) printReady(ready *runpod.Pod, o plan.DCOffer, asJSON bool) error {
	e, _ := ready.DirectSSH()
	if err := checkEndpoint(*ready, e); err != nil {
		return err
	}
	argv := sshArgv(e, "", nil)
	block := sshConfig(ready.Name, e, "")
	if asJSON {
		return writeJSON(a.env.Stdout, upJSON{InstanceType: o.InstanceType(), Pod: viewPod(*ready), SSHCommand: shellJoin(argv), SSHConfig: block})
	}
	fmt.Fprintf(a.env.Stdout, "pod %s (%s) is running: %s in %s at %s/hour\n\nConnect:\n  runpod-gpu ssh %s\n  %s\n\nOr add to ~/.ssh/config and run ssh %s:\n%s\nDelete it when done: runpod-gpu down %s\n",
		ready.ID, ready.Name, o.InstanceType(), o.DataCenterID, o.PricePerHour.Hourly(), ready.Name, shellJoin(argv), ready.Name, indent(block), ready.Name)
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

// userKey reads the user's public key: --ssh-key, else the first default
// key in ~/.ssh. No key at all is not an error here: account keys may do.
func (a *app) userKey(path string) (string, error) {
	paths := []string{path}
	if path == "" {
		paths = nil
		for _, name := range defaultKeys {
			paths = append(paths, filepath.Join(a.env.Home, ".ssh", name))
		}
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			if path != "" {
				return "", fail(ExitUsage, "--ssh-key %s: %v", path, err)
			}
			continue
		}
		key := strings.TrimSpace(string(data))
		if !publicKeyRE.MatchString(key) || strings.Contains(key, "\n") {
			return "", fail(ExitUsage, "%s is not one OpenSSH public key (want e.g. ssh-ed25519 AAAA… you@host); is it the private key?", p)
		}
		return key, nil
	}
	return "", nil
}

// publicKeys is the user's key plus the account's registered keys, read
// only, without duplicates.
func (a *app) publicKeys(ctx context.Context, userKey string) ([]string, error) {
	cctx, cancel := a.bound(ctx, callTimeout)
	account, err := a.client.ListSSHKeys(cctx)
	cancel()
	if err != nil {
		return nil, apiError("read the account's SSH keys", err)
	}
	var keys []string
	seen := map[string]bool{}
	for _, k := range append([]string{userKey}, account...) {
		k = strings.TrimSpace(k)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fail(ExitUsage, "no SSH public key: none in ~/.ssh (id_ed25519.pub, id_ecdsa.pub, id_rsa.pub), none given with --ssh-key, and none registered on the RunPod account; create one with ssh-keygen -t ed25519")
	}
	return keys, nil
}

// create sends the one POST. A lost or failed answer may hide a pod that
// exists, so it is looked up by its unique name before anything else.
func (a *app) create(ctx context.Context, req runpod.CreatePodRequest, lookupFor time.Duration) (*runpod.Pod, error) {
	cctx, cancel := a.bound(ctx, createTimeout)
	pod, err := a.client.CreatePod(cctx, req)
	cancel()
	switch {
	case err == nil:
		return pod, nil
	case errors.Is(err, runpod.ErrCapacity):
		return nil, fail(ExitNoCapacity, "RunPod has no capacity for %s x%d in %s any more; nothing was created. Run runpod-gpu offers again", req.GPU.ID, req.GPU.Count, req.DataCenterIDs[0])
	case errors.Is(err, runpod.ErrInsufficientBalance):
		return nil, fail(ExitFailure, "RunPod refused the pod: the account balance is too low (402); nothing was created")
	case errors.Is(err, runpod.ErrTransport), errors.Is(err, runpod.ErrServer), errors.Is(err, runpod.ErrUnusableRecord),
		errors.Is(err, runpod.ErrMalformedResponse), errors.Is(err, context.DeadlineExceeded):
	default:
		return nil, apiError("create pod "+req.Name, err)
	}
	fmt.Fprintf(a.env.Stderr, "the create answer was lost (%v); looking the pod up by name for up to %s, as RunPod's pod list can lag a create (--lookup-for changes it); it may bill meanwhile\n", err, lookupFor)
	return a.lookUpCreated(context.WithoutCancel(ctx), req.Name, err, lookupFor)
}

// CreateLookupBudget is how long up looks for a pod whose create answer was
// lost, by default: RunPod's pod list can lag a create by minutes, so one
// read that misses the pod proves nothing. It is the boot budget, which
// counts from the create: a pod listed later than that has already run out
// of it, so up would delete it as not booted. --lookup-for shortens it (down
// to MinCreateLookup). lookupPoll is how often it reads the list.
const (
	CreateLookupBudget = BootBudget
	MinCreateLookup    = time.Minute
	MaxCreateLookup    = BootBudget
	lookupPoll         = 10 * time.Second
)

// lookUpCreated reads the pod list until a live pod named name shows up,
// within bound. It never says nothing was created: after a lost
// answer a pod of that name may still appear and bill, so not finding one is
// ExitUnconfirmed, naming the pod to look for.
func (a *app) lookUpCreated(ctx context.Context, name string, cause error, bound time.Duration) (*runpod.Pod, error) {
	deadline := a.env.Clock.Now().Add(bound)
	var last error
	for {
		pods, err := a.listPods(ctx)
		last = err
		for _, p := range pods {
			if p.Name == name && a.yours(p) && p.Status != runpod.PodTerminated {
				return &p, nil
			}
		}
		left := deadline.Sub(a.env.Clock.Now())
		if left <= 0 || a.policy.Wait(reqpolicy.WithDeadline(ctx, deadline), min(lookupPoll, left), "lost create lookup") != nil {
			break
		}
	}
	why := fmt.Sprintf("no pod named %s showed up in the pod list within %s", name, bound)
	if last != nil {
		why = fmt.Sprintf("the pod list could not be read (%v)", last)
	}
	return nil, fail(ExitUnconfirmed, "create pod %s: the answer was lost (%v) and %s, but the pod may still exist and bill: check runpod-gpu ls and delete it with runpod-gpu down %s", name, cause, why, name)
}

// bootError is a boot that ended without a reachable pod.
type bootError struct{ reason string }

func (e *bootError) Error() string { return e.reason }

// waitBoot polls the pod until it runs with a direct SSH endpoint, within
// the boot budget counted from the create, showing elapsed time and state.
func (a *app) waitBoot(ctx context.Context, pod *runpod.Pod, created time.Time, poll time.Duration) (*runpod.Pod, error) {
	deadline := created.Add(BootBudget)
	show := newProgress(a.env.Stderr, created, BootBudget)
	defer show.done()
	state := string(pod.Status)
	for {
		now := a.env.Clock.Now()
		left := deadline.Sub(now)
		if left <= 0 {
			return nil, &bootError{fmt.Sprintf("pod %s did not boot within %s (last state %s)", pod.ID, BootBudget, state)}
		}
		cctx, cancel := a.bound(ctx, min(callTimeout, left))
		p, err := a.client.GetPod(cctx, pod.ID)
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil && errors.Is(err, runpod.ErrNotFound):
			return nil, &bootError{fmt.Sprintf("pod %s disappeared while booting", pod.ID)}
		case err != nil:
			show.note(a.env.Clock.Now(), fmt.Sprintf("read failed (%v); retrying", err))
		default:
			state = string(p.Status)
			if _, ok := p.DirectSSH(); ok && p.Status == runpod.PodRunning {
				show.update(a.env.Clock.Now(), state+", SSH reachable")
				return p, nil
			}
			if p.Status.Ended() {
				return nil, &bootError{fmt.Sprintf("pod %s ended in %s while booting", pod.ID, p.Status)}
			}
			show.update(a.env.Clock.Now(), state)
		}
		wctx := reqpolicy.WithDeadline(ctx, deadline)
		if err := a.policy.Wait(wctx, poll, "boot poll"); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &bootError{fmt.Sprintf("pod %s did not boot within %s (last state %s)", pod.ID, BootBudget, state)}
		}
	}
}

// abandon deletes a pod whose boot failed or was interrupted, and reports why.
func (a *app) abandon(ctx context.Context, pod *runpod.Pod, cause error) error {
	code := ExitBootFailed
	if ctx.Err() != nil {
		code = ExitInterrupted
		cause = fmt.Errorf("interrupted while pod %s was booting", pod.ID)
	}
	fmt.Fprintf(a.env.Stderr, "%v; deleting pod %s\n", cause, pod.ID)
	if _, err := a.deleter().Delete(context.WithoutCancel(ctx), pod.ID); err != nil {
		if errors.Is(err, lifecycle.ErrUnconfirmed) {
			return withCode(ExitUnconfirmed, fmt.Errorf("%v; and %w", cause, err))
		}
		return fail(ExitUnconfirmed, "%v; deleting pod %s failed: %v — it may still be billing, check runpod-gpu ls", cause, pod.ID, err)
	}
	return fail(code, "%v; pod %s was deleted", cause, pod.ID)
}

// progress shows elapsed/budget and the pod's state while it boots: one
// rewritten line on a terminal, a line per change otherwise (logs, CI).
type progress struct {
	w       io.Writer
	tty     bool
	start   time.Time
	budget  time.Duration
	last    string
	written bool
}

func newProgress(w io.Writer, start time.Time, budget time.Duration) *progress {
	p := &progress{w: w, start: start, budget: budget}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) line(now time.Time, state string) string {
	return fmt.Sprintf("[%s / %s] %s", clockFmt(now.Sub(p.start)), clockFmt(p.budget), state)
}

func (p *progress) update(now time.Time, state string) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", p.line(now, state))
		p.written = true
		return
	}
	if state != p.last {
		fmt.Fprintln(p.w, p.line(now, state))
		p.last = state
	}
}

func (p *progress) note(now time.Time, msg string) {
	if p.tty && p.written {
		fmt.Fprintln(p.w)
		p.written = false
	}
	fmt.Fprintln(p.w, p.line(now, msg))
}

func (p *progress) done() {
	if p.tty && p.written {
		fmt.Fprintln(p.w)
	}
}

func clockFmt(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
