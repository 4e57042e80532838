package devcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/lifecycle"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// podJSON is one pod as ls --json prints it; it never carries the pod's
// environment (a CI pod's holds its runner's JIT config).
type podJSON struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Status       string     `json:"status"`
	GPU          string     `json:"gpu,omitempty"`
	GPUCount     int        `json:"gpu_count,omitempty"`
	Cloud        string     `json:"cloud,omitempty"`
	Zone         string     `json:"zone,omitempty"`
	PricePerHour money.Rate `json:"price_per_hour"`
	Owner        string     `json:"owner"` // developer:<user>, ci:<repo> run <id>, or other
	SSH          string     `json:"ssh,omitempty"`
	SSHHost      string     `json:"ssh_host,omitempty"`
	SSHPort      int        `json:"ssh_port,omitempty"`
}

func viewPod(p runpod.Pod) podJSON {
	v := podJSON{ID: p.ID, Name: p.Name, Status: string(p.Status), Cloud: strings.ToLower(p.Cloud), Zone: p.DataCenterID,
		PricePerHour: money.PerHour(float64(p.Cost)), Owner: owner(p)}
	if p.GPU != nil {
		v.GPU, v.GPUCount = p.GPU.ID, max(p.GPU.Count, 1)
	}
	if e, ok := p.DirectSSH(); ok {
		v.SSH, v.SSHHost, v.SSHPort = fmt.Sprintf("%s@%s:%d", e.Username, e.Host, e.Port), e.Host, e.Port
	}
	return v
}

// owner says who a pod belongs to, from its ownership tags only.
func owner(p runpod.Pod) string {
	if user, ok := ownership.Developer(p.Env); ok {
		return "developer:" + user
	}
	if t, err := ownership.FromPod(p.Name, p.Env); err == nil {
		kept := ""
		if t.KeepFailed {
			kept = " (keep-failed)"
		}
		return fmt.Sprintf("ci:%s run %d%s", t.Repository, t.RunID, kept)
	}
	return "other"
}

func (a *app) listPods(ctx context.Context) ([]runpod.Pod, error) {
	cctx, cancel := a.bound(ctx, callTimeout)
	defer cancel()
	pods, err := a.client.ListPods(cctx, runpod.ListPodsQuery{})
	if err != nil {
		return nil, apiError("list pods", err)
	}
	return pods, nil
}

func (a *app) lsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the account's pods: yours, CI pods kept for debugging, and others",
		Long: `ls lists every pod of the account with its status, GPU, zone, hourly price,
owner (developer:<user> for pods started here, ci:<repo> run <id> for the CI
lane's, other for the rest) and its direct SSH endpoint once it runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.connect(); err != nil {
				return err
			}
			pods, err := a.listPods(cmd.Context())
			if err != nil {
				return err
			}
			views := make([]podJSON, 0, len(pods))
			for _, p := range pods {
				if p.Status != runpod.PodTerminated {
					views = append(views, viewPod(p))
				}
			}
			sort.SliceStable(views, func(i, j int) bool { return views[i].Name < views[j].Name })
			if asJSON {
				return writeJSON(a.env.Stdout, views)
			}
			printPods(a.env.Stdout, views)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the pods as a JSON array")
	return cmd
}

func printPods(w io.Writer, pods []podJSON) {
	if len(pods) == 0 {
		fmt.Fprintln(w, "no pods")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tSTATUS\tGPU\tZONE\t$/HOUR\tOWNER\tSSH")
	for _, p := range pods {
		gpu := "-"
		if p.GPU != "" {
			gpu = fmt.Sprintf("%s x%d", p.GPU, p.GPUCount)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", terminalSafe(p.Name), terminalSafe(p.ID), terminalSafe(p.Status),
			terminalSafe(gpu), terminalSafe(orDash(p.Zone)), strings.TrimPrefix(p.PricePerHour.Hourly().Format(money.Cents), "$"), terminalSafe(p.Owner), terminalSafe(orDash(p.SSH)))
	}
	tw.Flush()
}

// findPod resolves NAME|POD-ID among live pods: an id first, then a unique name.
func (a *app) findPod(ctx context.Context, ref string) (runpod.Pod, error) {
	pods, err := a.listPods(ctx)
	if err != nil {
		return runpod.Pod{}, err
	}
	var byName []runpod.Pod
	for _, p := range pods {
		if p.Status == runpod.PodTerminated {
			continue
		}
		if p.ID == ref {
			return p, nil
		}
		if p.Name == ref {
			byName = append(byName, p)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return runpod.Pod{}, fail(ExitNotFound, "no pod has the name or id %q; runpod-gpu ls lists them", ref)
	}
	ids := make([]string, len(byName))
	for i, p := range byName {
		ids[i] = terminalSafe(p.ID)
	}
	return runpod.Pod{}, fail(ExitUsage, "%d pods are named %q (%s): name one by its id", len(byName), ref, strings.Join(ids, ", "))
}

// completePods offers the names of live pods to shell completion.
func (a *app) completePods(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 || a.connect() != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	pods, err := a.listPods(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, p := range pods {
		if p.Status != runpod.PodTerminated {
			names = append(names, p.Name+"\t"+p.ID+" "+string(p.Status))
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// sshUserRE is a login name ssh can take (RunPod's is root); hostLabelRE one
// label of a DNS name.
var (
	sshUserRE   = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	hostLabelRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

// checkEndpoint refuses what the API says about a pod's SSH endpoint and
// name unless each is what it should be: a login name, an IP address or DNS
// name, a port, and a pod name fit for an ssh_config Host line. They reach
// ssh's command line and the printed ssh_config block, where a username of
// -oProxyCommand=… would run a local command and a newline would add a line.
func checkEndpoint(p runpod.Pod, e runpod.SSHEndpoint) error {
	switch {
	case !sshUserRE.MatchString(e.Username):
		return fail(ExitFailure, "pod %s: RunPod gave the SSH username %q: want a login name such as root; not connecting", p.ID, e.Username)
	case !validHost(e.Host):
		return fail(ExitFailure, "pod %s: RunPod gave the SSH host %q: want an IP address or a DNS name; not connecting", p.ID, e.Host)
	case e.Port < 1 || e.Port > 65535:
		return fail(ExitFailure, "pod %s: RunPod gave the SSH port %d: want 1 to 65535; not connecting", p.ID, e.Port)
	case !podNameRE.MatchString(p.Name):
		return fail(ExitFailure, "pod %s: RunPod gave the pod name %q: want 1-64 letters, digits, '.', '_' or '-' (it names the ssh_config host); not connecting", p.ID, p.Name)
	}
	return nil
}

// validHost accepts an IP address or a DNS name.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if !hostLabelRE.MatchString(label) {
			return false
		}
	}
	return true
}

// sshArgv is the ssh command line for an endpoint checkEndpoint accepted,
// with an optional remote command. "--" ends ssh's options before the
// destination, so nothing the API sent is ever read as one.
func sshArgv(e runpod.SSHEndpoint, identity string, remote []string) []string {
	argv := []string{"ssh", "-p", strconv.Itoa(e.Port), "-o", "StrictHostKeyChecking=accept-new"}
	if identity != "" {
		argv = append(argv, "-i", identity)
	}
	argv = append(argv, "--", e.Username+"@"+e.Host)
	return append(argv, remote...)
}

// sshConfig is an ssh_config block so that plain `ssh <alias>` reaches the pod.
func sshConfig(alias string, e runpod.SSHEndpoint, identity string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Host %s\n    HostName %s\n    Port %d\n    User %s\n    StrictHostKeyChecking accept-new\n", alias, e.Host, e.Port, e.Username)
	if identity != "" {
		fmt.Fprintf(&b, "    IdentityFile %s\n", identity)
	}
	return b.String()
}

// shellJoin quotes argv for a POSIX shell, so the printed line can be pasted.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, arg := range argv {
		out[i] = shellQuote(arg)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (a *app) sshCmd() *cobra.Command {
	var identity string
	var printOnly bool
	cmd := &cobra.Command{
		Use:   "ssh NAME|POD-ID [-- COMMAND…]",
		Short: "SSH into a pod as root through its direct endpoint",
		Long: `ssh connects as root to the pod's ssh.direct endpoint: the host's public IP
and the random public port RunPod mapped to 22/tcp. It prints the ssh
command line and an ssh_config block (paste it into ~/.ssh/config and plain
"ssh NAME" works), then runs ssh. Words after -- run on the pod.

It reaches any running pod with 22/tcp published. A pod the CI lane kept
(keep-failed-pods) publishes it only when provision had debug-ssh-public-key,
and lets in that key alone, once its startup script and tests have ended;
a kept pod without it has no endpoint. Exits with ssh's own status.`,
		Example: `  runpod-gpu ssh dev
  runpod-gpu ssh dev -- nvidia-smi
  runpod-gpu ssh dev --print >> ~/.ssh/config`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: a.completePods,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash > 1 || (dash == -1 && len(args) > 1) {
				return fail(ExitUsage, "ssh takes one pod name or id; put the remote command after --, e.g. runpod-gpu ssh dev -- nvidia-smi")
			}
			if err := a.connect(); err != nil {
				return err
			}
			p, err := a.findPod(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			e, ok := p.DirectSSH()
			if !ok {
				return fail(ExitFailure, "pod %s (%s) is %s and has no direct SSH endpoint yet: it needs to be RUNNING with 22/tcp published", terminalSafe(p.ID), terminalSafe(p.Name), terminalSafe(string(p.Status)))
			}
			if err := checkEndpoint(p, e); err != nil {
				return err
			}
			argv := sshArgv(e, identity, args[1:])
			block := sshConfig(p.Name, e, identity)
			if printOnly {
				fmt.Fprintln(a.env.Stdout, "# "+shellJoin(argv))
				fmt.Fprint(a.env.Stdout, block)
				return nil
			}
			fmt.Fprintf(a.env.Stderr, "%s\n# ssh_config:\n%s", shellJoin(argv), block)
			code, err := a.env.RunSSH(cmd.Context(), argv)
			if err != nil {
				return withCode(ExitFailure, err)
			}
			if code != 0 {
				return sshExit{code}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&identity, "identity", "i", "", "private key file for ssh -i")
	cmd.Flags().BoolVar(&printOnly, "print", false, "print the command line and the ssh_config block; do not connect")
	return cmd
}

func (a *app) deleter() *lifecycle.Deleter {
	return &lifecycle.Deleter{Pods: a.client, Policy: a.policy, Logf: func(format string, args ...any) {
		fmt.Fprintf(a.env.Stderr, format+"\n", args...)
	}}
}

func (a *app) downCmd() *cobra.Command {
	var yes, force bool
	cmd := &cobra.Command{
		Use:   "down NAME|POD-ID",
		Short: "Delete a pod and confirm it is gone",
		Long: `down deletes the pod through the lane's shared deletion helper: at most 5
DELETEs within 3 minutes, each bounded, until RunPod confirms the pod is
gone (a 2xx or a 404). Exits 5 when the deletion could not be confirmed: the
pod may still be billing, so check runpod-gpu ls.

It deletes a pod that runpod-gpu up started for you without asking. Any
other pod of the account (another developer's, one made elsewhere) it shows
and asks about first, unless --yes. A pod of the CI lane is refused without
--force: its run's cleanup and the reaper delete it.`,
		Example: `  runpod-gpu down dev
  runpod-gpu down 3xq9ppc7rlh0ps --yes
  runpod-gpu down rgpu-77-1-c1 --force`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completePods,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.connect(); err != nil {
				return err
			}
			p, err := a.findPod(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if err := a.mayDelete(p, yes, force); err != nil {
				return err
			}
			if _, err := a.deleter().Delete(cmd.Context(), p.ID); err != nil {
				if errors.Is(err, lifecycle.ErrUnconfirmed) {
					return withCode(ExitUnconfirmed, err)
				}
				return apiError("delete pod "+p.ID, err)
			}
			fmt.Fprintf(a.env.Stdout, "pod %s (%s) deleted\n", terminalSafe(p.ID), terminalSafe(p.Name))
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete a pod runpod-gpu did not start for you without asking")
	cmd.Flags().BoolVar(&force, "force", false, "allow deleting a pod of the CI lane")
	return cmd
}

// yours reports whether runpod-gpu up started p for this developer: its
// developer tags, for this user.
func (a *app) yours(p runpod.Pod) bool {
	want := ownership.DeveloperEnv(a.env.User)
	for k, v := range want {
		if p.Env[k] != v {
			return false
		}
	}
	return true
}

// mayDelete decides whether down may delete p: a pod up started for this
// developer at once; a CI lane pod only with force; any other only once
// confirmed, by yes or by an answer on standard input after it is shown.
func (a *app) mayDelete(p runpod.Pod, yes, force bool) error {
	if a.yours(p) {
		return nil
	}
	v := viewPod(p)
	if _, err := ownership.FromPod(p.Name, p.Env); err == nil && !force {
		return fail(ExitUsage, "pod %s (%s) belongs to the CI lane (%s): its run's cleanup and the reaper delete it; pass --force to delete it anyway",
			terminalSafe(p.ID), terminalSafe(p.Name), terminalSafe(v.Owner))
	}
	if yes {
		return nil
	}
	me := strings.TrimPrefix(ownership.DeveloperEnv(a.env.User)[ownership.EnvOwner], ownership.DeveloperMarkerPrefix)
	fmt.Fprintf(a.env.Stderr, "runpod-gpu up did not start this pod for you (developer:%s):\n", me)
	printPods(a.env.Stderr, []podJSON{v})
	fmt.Fprintf(a.env.Stderr, "Delete pod %s (%s)? [y/N] ", terminalSafe(p.ID), terminalSafe(p.Name))
	answer, _ := bufio.NewReader(a.env.Stdin).ReadString('\n')
	fmt.Fprintln(a.env.Stderr)
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return fail(ExitUsage, "pod %s (%s) not deleted: not confirmed (answer y, or pass --yes)", terminalSafe(p.ID), terminalSafe(p.Name))
}
