package devcli

import (
	"archive/zip"
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/ghapi"
	"github.com/org/runpod-gpu/pkg/history"
	"github.com/org/runpod-gpu/pkg/lanerecord"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reqpolicy"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
)

// ReproDir is where repro puts the test archive's files on the pod.
const ReproDir = "/root/repro"

// maxArchiveBytes bounds the unpacked test archive repro copies to the pod.
const maxArchiveBytes = 1 << 30

// downloadTimeout bounds one artifact or logs download: archives can be
// hundreds of megabytes.
const downloadTimeout = 5 * time.Minute

type reproFlags struct {
	repo      string
	name      string
	run       bool
	sshKey    string
	poll      time.Duration
	lookupFor time.Duration
	dir       string
}

// runRef is the run repro reproduces.
type runRef struct {
	owner, repo string
	runID       int64
	attempt     int // 0: the latest attempt with a record
}

func (a *app) reproCmd() *cobra.Command {
	var f reproFlags
	cmd := &cobra.Command{
		Use:   "repro <run URL or id> [--repo OWNER/NAME] [--run]",
		Short: "Start a developer pod like a lane run's, with its test archive, and open a shell or run its tests",
		Long: `repro reads a finished lane run's lane record (the artifact
runpod-gpu-lane-record-<run>-<attempt>: GPU type, image digest, CUDA floor,
tested ref, test archive artifact, test command), and refuses a record no
lane job's log seals (any job of the run, the pull request's code included,
can upload an artifact). It prints the worst-case cost, then starts a
developer pod with the same GPU type and count, the same image by digest and
the same CUDA floor (the type out of stock: the nearest in stock, said so —
the floor met, at least its memory, the least memory, then the cheapest;
none: exit 3, nothing created), waits until SSH works, copies the test archive
artifact's files to ` + ReproDir + ` with scp, and opens a shell there; with
--run it runs the test command there instead, streaming its output, and
exits with its status.

The pod is a developer pod (the CI reaper never touches it): it bills until
runpod-gpu down NAME. The worst case printed is its price for the boot
budget plus the lane's lifetime_seconds, the bound the lane's own pod had.

The lane's provision job writes, seals and uploads the record. When it
names no test archive (gpu-lane.yml's GPU job fetches the tested ref
itself), the tested ref is archived with git archive from your checkout
(--dir, default .): run git fetch origin <ref> there if it lacks it.

GitHub is read with GH_TOKEN (or GITHUB_TOKEN), at GITHUB_API_URL; RunPod
with RUNPOD_API_KEY or ~/.runpod/config.toml.`,
		Example: `  runpod-gpu repro https://github.com/acme/model/actions/runs/7001
  runpod-gpu repro 7001 --repo acme/model --run
  runpod-gpu down repro-7001`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.repro(cmd, args[0], f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.repo, "repo", "", "OWNER/NAME of the run's repository (required with a bare run id)")
	fl.StringVar(&f.name, "name", "", "pod name; default repro-<run id>")
	fl.StringVar(&f.dir, "dir", ".", "your checkout of the repository: with a record that names no test archive, the tested ref is archived from it")
	fl.BoolVar(&f.run, "run", false, "run the record's test command on the pod and stream its output, instead of a shell")
	fl.StringVar(&f.sshKey, "ssh-key", "", "your public key file; default ~/.ssh/id_ed25519.pub, id_ecdsa.pub or id_rsa.pub")
	fl.DurationVar(&f.poll, "poll", DefaultPoll, "how often to read the pod while it boots")
	fl.DurationVar(&f.lookupFor, "lookup-for", CreateLookupBudget, "after a lost create answer, how long to look for the pod in RunPod's pod list")
	_ = fl.MarkHidden("poll")
	return cmd
}

var (
	runURLRE  = regexp.MustCompile(`^/([A-Za-z0-9_.-]{1,100})/([A-Za-z0-9_.-]{1,100})/actions/runs/([0-9]{1,19})(?:/attempts/([0-9]{1,4}))?(?:/.*)?$`)
	runIDRE   = regexp.MustCompile(`^[0-9]{1,19}$`)
	repoArgRE = regexp.MustCompile(`^([A-Za-z0-9_.-]{1,100})/([A-Za-z0-9_.-]{1,100})$`)
)

// parseRunRef reads "https://github.com/OWNER/NAME/actions/runs/ID[/attempts/N]"
// or a bare run id with repo ("OWNER/NAME").
func parseRunRef(arg, repo string) (runRef, error) {
	var r runRef
	arg = strings.TrimSpace(arg)
	if runIDRE.MatchString(arg) {
		m := repoArgRE.FindStringSubmatch(strings.TrimSpace(repo))
		if m == nil {
			return r, fail(ExitUsage, "--repo %q: want OWNER/NAME with a bare run id (or pass the run's URL)", repo)
		}
		r.owner, r.repo = m[1], m[2]
		id, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || id <= 0 {
			return r, fail(ExitUsage, "run %q: want a positive workflow run id", arg)
		}
		r.runID = id
		return r, nil
	}
	u, err := url.Parse(arg)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return r, fail(ExitUsage, "run %q: want a run URL https://github.com/OWNER/NAME/actions/runs/ID or a run id", arg)
	}
	m := runURLRE.FindStringSubmatch(u.Path)
	if m == nil {
		return r, fail(ExitUsage, "run %q: want a run URL https://github.com/OWNER/NAME/actions/runs/ID or a run id", arg)
	}
	r.owner, r.repo = m[1], m[2]
	if repo != "" && !strings.EqualFold(repo, r.owner+"/"+r.repo) {
		return r, fail(ExitUsage, "--repo %q and the run URL's repository %s/%s differ", repo, r.owner, r.repo)
	}
	id, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil || id <= 0 {
		return r, fail(ExitUsage, "run %q: the run id is not a positive number", arg)
	}
	r.runID = id
	if m[4] != "" {
		if r.attempt, err = strconv.Atoi(m[4]); err != nil || r.attempt <= 0 {
			return r, fail(ExitUsage, "run %q: the attempt is not a positive number", arg)
		}
	}
	return r, nil
}

func (f reproFlags) check() error {
	switch {
	case f.name != "" && !podNameRE.MatchString(f.name):
		return fail(ExitUsage, "--name %q: want 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", f.name)
	case f.poll <= 0:
		return fail(ExitUsage, "--poll %s: want a positive duration", f.poll)
	case f.lookupFor < MinCreateLookup || f.lookupFor > MaxCreateLookup:
		return fail(ExitUsage, "--lookup-for %s: want %s to %s", f.lookupFor, MinCreateLookup, MaxCreateLookup)
	}
	return nil
}

func (a *app) repro(cmd *cobra.Command, arg string, f reproFlags) error {
	ctx := cmd.Context()
	ref, err := parseRunRef(arg, f.repo)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	if f.name == "" {
		f.name = "repro-" + strconv.FormatInt(ref.runID, 10)
	}
	gh, err := a.reproGitHub(ctx, ref)
	if err != nil {
		return err
	}
	rec, arts, err := a.readLaneRecord(ctx, gh, ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stderr, "run %d attempt %d of %s: %s x%d, image %s, CUDA >= %s, tested ref %s, tests: %s\n",
		rec.RunID, rec.Attempt, rec.Repository, rec.GPUType, rec.GPUCount, rec.Image, rec.CUDAFloor, rec.TestedRef, rec.TestCommand)
	if f.run && rec.TestCommand == "" {
		return fail(ExitUsage, "--run: run %d's lane record has no test command (the lane's test-command input was empty); leave --run out for a shell", rec.RunID)
	}
	archive, err := a.testFiles(ctx, gh, arts, rec, f.dir)
	if err != nil {
		return err
	}
	defer os.RemoveAll(filepath.Dir(archive))
	pod, err := a.startReproPod(ctx, rec, f)
	if err != nil {
		return err
	}
	e, _ := pod.DirectSSH()
	if err := checkEndpoint(*pod, e); err != nil {
		return err
	}
	scp := []string{"scp", "-P", strconv.Itoa(e.Port), "-o", "StrictHostKeyChecking=accept-new", "-r", "--", archive, e.Username + "@" + e.Host + ":" + filepath.Dir(ReproDir) + "/"}
	if code, err := a.env.RunSSH(ctx, scp); err != nil || code != 0 {
		return fail(ExitFailure, "copy the test archive to pod %s failed (scp %v, status %d); the pod is running and billing: runpod-gpu ssh %s, or runpod-gpu down %s", pod.ID, err, code, pod.Name, pod.Name)
	}
	fmt.Fprintf(a.env.Stderr, "%s copied to %s on pod %s; delete the pod when done: runpod-gpu down %s\n", filesOf(rec), ReproDir, pod.ID, pod.Name)
	remote := "cd " + ReproDir + ` && exec "${SHELL:-/bin/bash}" -l`
	if f.run {
		remote = "cd " + ReproDir + " && " + rec.TestCommand
	}
	argv := append([]string{"ssh", "-t"}, sshArgv(e, "", []string{remote})[1:]...)
	code, err := a.env.RunSSH(ctx, argv)
	if err != nil {
		return withCode(ExitFailure, err)
	}
	if code != 0 {
		return sshExit{code}
	}
	return nil
}

// reproGitHub is a client for ref's repository with the environment's token.
func (a *app) reproGitHub(ctx context.Context, ref runRef) (*ghapi.Client, error) {
	token := firstNonEmpty(a.env.Getenv("GH_TOKEN"), a.env.Getenv("GITHUB_TOKEN"))
	if token == "" {
		return nil, fail(ExitUsage, "no GitHub token: set GH_TOKEN (e.g. GH_TOKEN=$(gh auth token)) to a token that can read %s/%s's Actions artifacts and logs", ref.owner, ref.repo)
	}
	policy := reqpolicy.New(reqpolicy.WithClock(a.env.Clock), reqpolicy.WithSleeper(a.env.Sleep), reqpolicy.WithClassifier(ghapi.RateLimitClassifier(a.env.Clock)))
	gh, err := ghapi.New(ctx, ghapi.Options{BaseURL: a.env.Getenv("GITHUB_API_URL"), HTTPClient: a.env.HTTPClient, Policy: policy,
		Token: token, Owner: ref.owner, Repo: ref.repo})
	if err != nil {
		return nil, withCode(ExitUsage, fmt.Errorf("GITHUB_API_URL: %w", err))
	}
	return gh, nil
}

// readLaneRecord finds, downloads, parses and checks the seal of ref's lane
// record; it also returns the run's artifacts.
func (a *app) readLaneRecord(ctx context.Context, gh *ghapi.Client, ref runRef) (lanerecord.Record, []*github.Artifact, error) {
	var rec lanerecord.Record
	cctx, cancel := a.bound(ctx, callTimeout)
	arts, err := gh.ListRunArtifacts(cctx, ref.runID)
	cancel()
	if err != nil {
		return rec, nil, fail(ExitFailure, "list the artifacts of run %d: %v", ref.runID, err)
	}
	var found *github.Artifact
	best := 0
	for _, art := range arts {
		rest, ok := strings.CutPrefix(art.GetName(), lanerecord.ArtifactPrefix+strconv.FormatInt(ref.runID, 10)+"-")
		n, err := strconv.Atoi(rest)
		if !ok || err != nil || n <= 0 || art.GetExpired() || (ref.attempt != 0 && n != ref.attempt) || n <= best {
			continue
		}
		found, best = art, n
	}
	if found == nil {
		return rec, nil, fail(ExitNotFound, "run %d of %s/%s has no lane record artifact %s (a lane run before repro existed, another workflow, or an expired artifact)",
			ref.runID, ref.owner, ref.repo, lanerecord.ArtifactName(ref.runID, max(ref.attempt, 1)))
	}
	data, err := a.downloadFile(ctx, gh, found, lanerecord.FileName, lanerecord.MaxBytes)
	if err != nil {
		return rec, nil, err
	}
	if rec, err = lanerecord.Parse(data); err != nil {
		return rec, nil, fail(ExitRecordRefused, "artifact %s: %v", found.GetName(), err)
	}
	if rec.RunID != ref.runID || rec.Attempt != best || !strings.EqualFold(rec.Repository, ref.owner+"/"+ref.repo) {
		return rec, nil, fail(ExitRecordRefused, "artifact %s records run %d attempt %d of %s, not this run: refused", found.GetName(), rec.RunID, rec.Attempt, rec.Repository)
	}
	if err := a.checkSeal(ctx, gh, rec, data, found.GetName()); err != nil {
		return rec, nil, err
	}
	return rec, arts, nil
}

// checkSeal refuses a record no lane job's log vouches for: only the
// provision job, which runs no pull-request code, writes and seals it.
func (a *app) checkSeal(ctx context.Context, gh *ghapi.Client, rec lanerecord.Record, data []byte, name string) error {
	cctx, cancel := a.bound(ctx, downloadTimeout)
	logs, err := gh.DownloadRunLogs(cctx, rec.RunID, rec.Attempt)
	cancel()
	if err != nil {
		return fail(ExitFailure, "read the logs of run %d attempt %d, which seal the lane record: %v", rec.RunID, rec.Attempt, err)
	}
	zr, err := zip.NewReader(bytes.NewReader(logs), int64(len(logs)))
	if err != nil {
		return fail(ExitFailure, "the logs of run %d: %v", rec.RunID, err)
	}
	want := cost.SealLine(data).Format()
	for _, f := range zr.File {
		if !sealingJobFile(f.Name) {
			continue
		}
		if sealed, err := fileHasLine(f, want); err == nil && sealed {
			return nil
		}
	}
	return fail(ExitRecordRefused, "lane record %s refused as forged: no %q job log seals its content (%s); any job of the run can upload an artifact", name, history.JobProvision, want)
}

// sealingJobFile reports whether a logs archive file is the provision job's.
func sealingJobFile(name string) bool {
	if folder, _, nested := strings.Cut(name, "/"); nested {
		return folder == history.JobProvision
	}
	_, job, ok := strings.Cut(strings.TrimSuffix(name, ".txt"), "_")
	return ok && job == history.JobProvision
}

// fileHasLine reports whether a log file has a line ending in want (log
// lines start with a timestamp).
func fileHasLine(f *zip.File, want string) (bool, error) {
	rc, err := f.Open()
	if err != nil {
		return false, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(io.LimitReader(rc, 256<<20))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasSuffix(strings.TrimRight(sc.Text(), "\r"), want) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// downloadFile downloads art and returns its file name, at most limit bytes.
func (a *app) downloadFile(ctx context.Context, gh *ghapi.Client, art *github.Artifact, name string, limit int64) ([]byte, error) {
	cctx, cancel := a.bound(ctx, downloadTimeout)
	data, err := gh.DownloadArtifact(cctx, art.GetID())
	cancel()
	if err != nil {
		return nil, fail(ExitFailure, "download artifact %s: %v", art.GetName(), err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fail(ExitFailure, "artifact %s: %v", art.GetName(), err)
	}
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fail(ExitFailure, "artifact %s: %s: %v", art.GetName(), name, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, limit+1))
		if err != nil || int64(len(b)) > limit {
			return nil, fail(ExitFailure, "artifact %s: %s unreadable or over %d bytes", art.GetName(), name, limit)
		}
		return b, nil
	}
	return nil, fail(ExitFailure, "artifact %s holds no %s", art.GetName(), name)
}

// filesOf names what repro copies to the pod for rec.
func filesOf(rec lanerecord.Record) string {
	if rec.TestArchive == "" {
		return "tested ref " + rec.TestedRef
	}
	return "test archive " + rec.TestArchive
}

// testFiles is the local folder of files repro copies to the pod: the
// record's test archive artifact, or, when the lane fetched the tested ref
// itself (no archive), that ref archived from the user's checkout dir.
func (a *app) testFiles(ctx context.Context, gh *ghapi.Client, arts []*github.Artifact, rec lanerecord.Record, dir string) (string, error) {
	if rec.TestArchive != "" {
		return a.fetchTestArchive(ctx, gh, arts, rec)
	}
	return archiveTestedRef(ctx, dir, rec.TestedRef)
}

// gitTimeout bounds one local git command.
const gitTimeout = 2 * time.Minute

// archiveTestedRef runs git archive of ref in the checkout dir and unpacks
// it into a local folder named like ReproDir, returned for scp.
func archiveTestedRef(ctx context.Context, dir, ref string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "git", "-C", dir, "cat-file", "-e", ref+"^{commit}").CombinedOutput(); err != nil {
		return "", fail(ExitNotFound, "the lane record names no test archive (the lane fetched tested ref %s itself), and --dir %q has no commit %s: run git fetch origin %s in your checkout, or pass --dir (%v: %s)",
			ref, dir, ref, ref, err, strings.TrimSpace(string(out)))
	}
	tmp, err := os.MkdirTemp("", "runpod-gpu-repro-")
	if err != nil {
		return "", withCode(ExitFailure, err)
	}
	zipped := filepath.Join(tmp, "tested-ref.zip")
	if out, err := exec.CommandContext(ctx, "git", "-C", dir, "archive", "--format=zip", "-o", zipped, ref).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fail(ExitFailure, "git archive %s in %s: %v: %s", ref, dir, err, strings.TrimSpace(string(out)))
	}
	zr, err := zip.OpenReader(zipped)
	if err != nil {
		os.RemoveAll(tmp)
		return "", fail(ExitFailure, "git archive %s: %v", ref, err)
	}
	defer zr.Close()
	folder := filepath.Join(tmp, filepath.Base(ReproDir))
	if err := unzipTo(&zr.Reader, folder); err != nil {
		os.RemoveAll(tmp)
		return "", fail(ExitFailure, "git archive %s: %v", ref, err)
	}
	return folder, nil
}

// fetchTestArchive downloads the record's test archive artifact and unpacks
// its files into a local folder named like ReproDir, returned for scp.
func (a *app) fetchTestArchive(ctx context.Context, gh *ghapi.Client, arts []*github.Artifact, rec lanerecord.Record) (string, error) {
	var art *github.Artifact
	for _, x := range arts {
		if x.GetName() == rec.TestArchive && !x.GetExpired() {
			art = x
		}
	}
	if art == nil {
		return "", fail(ExitNotFound, "run %d has no test archive artifact %s (expired, or never uploaded)", rec.RunID, rec.TestArchive)
	}
	cctx, cancel := a.bound(ctx, downloadTimeout)
	data, err := gh.DownloadArtifact(cctx, art.GetID())
	cancel()
	if err != nil {
		return "", fail(ExitFailure, "download the test archive %s: %v", rec.TestArchive, err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", fail(ExitFailure, "test archive %s: %v", rec.TestArchive, err)
	}
	tmp, err := os.MkdirTemp("", "runpod-gpu-repro-")
	if err != nil {
		return "", withCode(ExitFailure, err)
	}
	dir := filepath.Join(tmp, filepath.Base(ReproDir))
	if err := unzipTo(zr, dir); err != nil {
		os.RemoveAll(tmp)
		return "", fail(ExitFailure, "test archive %s: %v", rec.TestArchive, err)
	}
	return dir, nil
}

// unzipTo writes zr's files under dir, refusing names that leave it and more
// than maxArchiveBytes in all.
func unzipTo(zr *zip.Reader, dir string) error {
	left := int64(maxArchiveBytes)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range zr.File {
		if !filepath.IsLocal(f.Name) || strings.Contains(f.Name, `\`) {
			return fmt.Errorf("file name %q leaves the archive's folder", f.Name)
		}
		path := filepath.Join(dir, f.Name)
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(path, 0o700); err != nil {
				return err
			}
			continue
		}
		if !f.Mode().IsRegular() {
			return fmt.Errorf("%s is not a plain file", f.Name)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		n, err := writeZipFile(f, path, left)
		if err != nil {
			return err
		}
		left -= n
	}
	return nil
}

func writeZipFile(f *zip.File, path string, left int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(rc, left+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > left {
		err = fmt.Errorf("the archive unpacks to more than %d bytes", maxArchiveBytes)
	}
	return n, err
}

// startReproPod creates the developer pod like the record's and waits until
// SSH works. The worst case is printed before the create.
func (a *app) startReproPod(ctx context.Context, rec lanerecord.Record, f reproFlags) (*runpod.Pod, error) {
	userKey, err := a.userKey(f.sshKey)
	if err != nil {
		return nil, err
	}
	if err := a.connect(); err != nil {
		return nil, err
	}
	if err := a.checkNameFree(ctx, f.name); err != nil {
		return nil, err
	}
	keys, err := a.publicKeys(ctx, userKey)
	if err != nil {
		return nil, err
	}
	o, err := a.reproOffer(ctx, rec)
	if err != nil {
		return nil, err
	}
	lifetime := time.Duration(rec.LifetimeSeconds) * time.Second
	price := o.PricePerHour
	fmt.Fprintf(a.env.Stdout, "worst case: %s (%s at %s/hour for the %s boot budget plus the lane's %s lifetime); it bills until runpod-gpu down %s\n",
		spend.Candidate(price, BootBudget, lifetime), o.InstanceType(), price.Hourly().Format(money.Fine), BootBudget, lifetime, f.name)
	env := ownership.DeveloperEnv(a.env.User)
	env["PUBLIC_KEY"] = strings.Join(keys, "\n")
	req := runpod.CreatePodRequest{
		Name: f.name, Image: rec.Image, GPU: &runpod.CreateGPU{ID: o.GPUID, Count: o.GPUCount, MinCudaVersion: rec.CUDAFloor},
		Cloud: o.Cloud, DataCenterIDs: []string{o.DataCenterID}, Disk: rec.DiskGB,
		Ports: []string{"22/tcp"}, Env: env,
	}
	created := a.env.Clock.Now()
	pod, err := a.create(ctx, req, f.lookupFor)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(a.env.Stderr, "pod %s (%s) created; waiting up to %s for it to boot\n", pod.ID, pod.Name, BootBudget)
	ready, err := a.waitBoot(ctx, pod, created, f.poll)
	if err != nil {
		return nil, a.abandon(ctx, pod, err)
	}
	return ready, nil
}

// reproOffer is the offer a repro pod is created from: the recorded GPU type
// where it is in stock, cheapest first; else the nearest type in stock
// (nearestOffer), said so on stderr.
func (a *app) reproOffer(ctx context.Context, rec lanerecord.Record) (plan.DCOffer, error) {
	clouds := []string{runpod.CloudSecure, runpod.CloudCommunity}
	q := query{name: rec.GPUType, exact: true, count: rec.GPUCount, clouds: clouds}
	set, err := a.readOffers(ctx, q)
	switch {
	case err != nil:
		return plan.DCOffer{}, err
	case len(set.offers) > 0:
		return a.takeOffer(ctx, set.offers[0])
	}
	o, recordedGB, err := a.nearestOffer(ctx, rec, clouds)
	if err != nil {
		return plan.DCOffer{}, err
	}
	fmt.Fprintf(a.env.Stderr, "the run's %s x%d is out of stock everywhere; starting the nearest in stock instead (CUDA >= %s as recorded, at least its %d GB, the least memory, then the cheapest): %s with %d GB\n",
		terminalSafe(rec.GPUType), rec.GPUCount, rec.CUDAFloor, recordedGB, terminalSafe(o.InstanceType()), o.MemoryGB)
	return a.takeOffer(ctx, o)
}

// nearestOffer picks the GPU type to run a record on when its own is out of
// stock: among the types in stock on machines that meet the recorded CUDA
// floor (the catalog read with minCudaVersion, as the lane reads it), with
// at least the recorded type's memory (a test that fit there fits), the one
// with the least memory, then the cheapest; the recorded type's memory comes
// from the catalog, which lists types out of stock too. None: ExitNoCapacity,
// nothing created — a smaller GPU could fail the tests for its own reasons.
func (a *app) nearestOffer(ctx context.Context, rec lanerecord.Record, clouds []string) (plan.DCOffer, int, error) {
	var offers []plan.Offer
	recordedGB := 0
	for _, cloud := range clouds {
		cctx, cancel := a.bound(ctx, callTimeout)
		gpus, err := a.client.ListGPUTypes(cctx, runpod.GPUQuery{Include: true, Product: runpod.ProductPod, Count: rec.GPUCount, Cloud: cloud,
			MinCudaVersion: rec.CUDAFloor})
		cancel()
		if err != nil {
			return plan.DCOffer{}, 0, apiError("read the GPU catalog ("+strings.ToLower(cloud)+" cloud, CUDA >= "+rec.CUDAFloor+")", err)
		}
		for _, g := range gpus {
			if g.ID == rec.GPUType {
				recordedGB = max(recordedGB, g.Memory)
				continue
			}
			offers = append(offers, catalogOffer(g, cloud))
		}
	}
	if recordedGB == 0 {
		return plan.DCOffer{}, 0, fail(ExitNoCapacity, "the run's %s x%d is out of stock and the catalog does not list it with CUDA >= %s, so no type near it can be chosen; nothing was created",
			rec.GPUType, rec.GPUCount, rec.CUDAFloor)
	}
	var fits []plan.DCOffer
	for _, o := range plan.DataCenterOffers(offers, rec.GPUCount, plan.DCFilter{}) { // cheapest first
		if o.MemoryGB >= recordedGB {
			fits = append(fits, o)
		}
	}
	if len(fits) == 0 {
		return plan.DCOffer{}, 0, fail(ExitNoCapacity, "the run's %s x%d is out of stock, and no GPU type with at least its %d GB and CUDA >= %s is in stock; nothing was created. Try again later",
			rec.GPUType, rec.GPUCount, recordedGB, rec.CUDAFloor)
	}
	slices.SortStableFunc(fits, func(x, y plan.DCOffer) int { return cmp.Compare(x.MemoryGB, y.MemoryGB) })
	return fits[0], recordedGB, nil
}
