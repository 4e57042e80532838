package rules

// The action image's size is what every step of the lane pulls: the final
// stage's whole content is measured, each artifact built exactly as the
// Dockerfile builds it (issue 27 point 4), not one program.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionimage"
)

// metaMaxImageBytes is the most the action image's content may weigh: every
// file the final stage holds, the CA bundle and the time zones included.
const metaMaxImageBytes = 20_000_000

// metaImageBuildValues stand in for the build arguments, so that the injected
// defaults can be found in the binary.
var metaImageBuildValues = map[string]string{
	"TARGETOS": "linux", "TARGETARCH": "amd64", "VERSION": "v0.0.0-sizetest",
	"PROOF_URL":         "https://example.invalid/sizetest/cuda-smoke",
	"WORKER_URL":        "https://example.invalid/sizetest/serverless-worker",
	"CUDA_RUNNER_IMAGE": "ghcr.io/org/runpod-gpu-runner-cuda@sha256:" + strings.Repeat("c3", 32),
	"POD_IMAGE":         "ghcr.io/org/runpod-gpu-runner@sha256:" + strings.Repeat("d4", 32),
}

// metaShellWords splits one simple shell command into words: blanks separate
// words, double quotes group them, $NAME and ${NAME} expand from vars.
func metaShellWords(cmd string, vars map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range cmd {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\'' || r == '`' || r == '\\':
			return nil, fmt.Errorf("%q: quoting the test cannot follow", cmd)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("%q: unterminated quote", cmd)
	}
	if inWord {
		words = append(words, cur.String())
	}
	var missing []string
	for i, w := range words {
		words[i] = os.Expand(w, func(k string) string {
			v, ok := vars[k]
			if !ok {
				missing = append(missing, k)
			}
			return v
		})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%q: no value for %v", cmd, missing)
	}
	return words, nil
}

// metaImageBuild plays the build stages' RUN instructions that write the
// files the final stage copies, on this machine: root stands for the build
// stage's /, Go's own files (/usr/local/go) are this toolchain's and the CA
// bundle is this machine's. It knows the few commands the Dockerfile uses
// and refuses any other, so a new way of producing a file cannot slip past
// the measurement. Set compile to false to refuse go builds (for tests of the
// player itself).
type metaImageBuild struct {
	t       *testing.T
	root    string
	vars    map[string]string
	compile bool
	built   map[string][]string // image path of each go build output → its go build environment and arguments
	def     *actionimage.Definition
	entries []actionimage.Entry // what the final stage copies, as the image builder lays it out
}

var metaSHAVarRE = regexp.MustCompile(`^([a-z_0-9]+)=\$\(cut -d' ' -f1 (/\S+)\)$`)

// local maps a path of the build stage to this machine.
func (b *metaImageBuild) local(p string) string {
	if rest, ok := strings.CutPrefix(p, "/usr/local/go/"); ok {
		return filepath.Join(runtime.GOROOT(), filepath.FromSlash(rest))
	}
	if p == "/etc/ssl/certs/ca-certificates.crt" {
		return p
	}
	return filepath.Join(b.root, filepath.FromSlash(p))
}

// run plays one RUN instruction.
func (b *metaImageBuild) run(args string) error {
	dir := "/"
	for _, cmd := range strings.Split(strings.ReplaceAll(args, "&&", ";"), ";") {
		cmd = strings.TrimSpace(cmd)
		if m := metaSHAVarRE.FindStringSubmatch(cmd); m != nil {
			data, err := os.ReadFile(b.local(m[2]))
			if err != nil {
				return err
			}
			b.vars[m[1]] = strings.Fields(string(data))[0]
			continue
		}
		words, err := metaShellWords(strings.Replace(cmd, "> ", ">", 1), b.vars)
		if err != nil {
			return err
		}
		if err := b.command(&dir, words); err != nil {
			return fmt.Errorf("%q: %w", cmd, err)
		}
	}
	return nil
}

// command plays one command of a RUN; dir is the working directory.
func (b *metaImageBuild) command(dir *string, words []string) error {
	var env []string
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		env, words = append(env, words[0]), words[1:]
	}
	switch {
	case len(words) == 0 || strings.Join(words, " ") == "set -eu" || strings.Join(words, " ") == "go -C /src mod download":
		return nil
	case words[0] == "cd" && len(words) == 2:
		*dir = words[1]
		return os.MkdirAll(b.local(*dir), 0o755)
	case len(words) == 4 && words[0] == "mkdir" && words[1] == "-m":
		mode, err := strconv.ParseUint(words[2], 8, 32)
		if err != nil {
			return fmt.Errorf("mkdir -m %s: want an octal mode", words[2])
		}
		if err := os.MkdirAll(b.local(words[3]), 0o755); err != nil {
			return err
		}
		perm := fs.FileMode(mode) & fs.ModePerm
		if mode&0o1000 != 0 {
			perm |= fs.ModeSticky
		}
		return os.Chmod(b.local(words[3]), perm) // the image keeps it: /tmp is 1777
	case len(words) == 3 && words[0] == "cp":
		data, err := os.ReadFile(b.local(words[1]))
		if err != nil {
			return err
		}
		return os.WriteFile(b.local(words[2]), data, 0o644)
	case len(words) == 3 && words[0] == "sha256sum" && strings.HasPrefix(words[2], ">"):
		data, err := os.ReadFile(b.local(filepath.Join(*dir, words[1])))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		return os.WriteFile(b.local(filepath.Join(*dir, words[2][1:])), []byte(hex.EncodeToString(sum[:])+"  "+words[1]+"\n"), 0o644)
	case len(words) > 2 && words[0] == "go" && words[1] == "build":
		return b.goBuild(env, words[2:])
	}
	return fmt.Errorf("the size test cannot play %v; teach metaImageBuild.command what it writes", words)
}

// goBuild builds as the Dockerfile does: its environment, flags and -X
// defaults; only the output path (mapped to root) and the source directory
// (-C /src is this repository) differ.
func (b *metaImageBuild) goBuild(env, args []string) error {
	if !b.compile {
		return fmt.Errorf("go build %v: compiling is off", args)
	}
	var out string
	var kept []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-C":
			i++
			continue
		case "-o":
			out = args[i+1]
			kept = append(kept, "-o", b.local(out))
			i++
			continue
		}
		kept = append(kept, args[i])
	}
	if out == "" {
		return fmt.Errorf("go build %v has no -o", args)
	}
	if err := os.MkdirAll(filepath.Dir(b.local(out)), 0o755); err != nil {
		return err
	}
	cmd := exec.Command("go", append([]string{"build"}, kept...)...)
	cmd.Dir = metaRepoRoot
	cmd.Env = append(os.Environ(), env...)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(kept, " "), err, output)
	}
	b.built[out] = append(env, args...)
	return nil
}

// metaImageFile is one file of the final stage.
type metaImageFile struct {
	path string // in the image
	size int64
}

// metaFinalStageContent lists every file the Dockerfile's final stage holds:
// it plays the stages each COPY --from copies from (and the stages those are
// FROM) and collects what each COPY copies.
func metaFinalStageContent(t *testing.T, text string, compile bool) ([]metaImageFile, *metaImageBuild, error) {
	t.Helper()
	stages := metaParseDockerfile(text)
	byName := map[string]metaStage{}
	for _, st := range stages {
		byName[st.name] = st
	}
	b := &metaImageBuild{t: t, root: t.TempDir(), vars: map[string]string{}, compile: compile, built: map[string][]string{}}
	for k, v := range metaImageBuildValues {
		b.vars[k] = v
	}
	played := map[string]bool{}
	var play func(name string) error
	play = func(name string) error {
		st, ok := byName[name]
		if !ok || played[name] {
			return nil
		}
		played[name] = true
		if err := play(st.from); err != nil {
			return err
		}
		for _, in := range st.instructions {
			if in.keyword == "RUN" && strings.Contains(in.args, "/out") {
				if err := b.run(in.args); err != nil {
					return fmt.Errorf("stage %s: %w", name, err)
				}
			}
		}
		return nil
	}
	// What the final stage holds is read by the image builder itself (pkg/actionimage), so the
	// measurement, the image built here and the image the release verifies share one reading.
	def, err := actionimage.ParseDockerfile(text)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range def.Copies {
		if err := play(c.From); err != nil {
			return nil, nil, err
		}
	}
	entries, err := actionimage.Entries(def, func(_, p string) string { return b.local(p) })
	if err != nil {
		return nil, nil, err
	}
	b.def, b.entries = def, entries
	var files []metaImageFile
	for _, e := range entries {
		if e.Mode.IsRegular() {
			files = append(files, metaImageFile{path: e.Path, size: e.Size})
		}
	}
	return files, b, nil
}

// TestMetaImageContentCountsEveryFile plays small Dockerfiles (nothing is
// compiled): every file the final stage copies counts, the CA bundle and
// the time zones included, and a command the player does not know is refused
// rather than measured as nothing.
func TestMetaImageContentCountsEveryFile(t *testing.T) {
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err != nil {
		t.Skip("no CA bundle on this machine")
	}
	ca, err := os.Stat("/etc/ssl/certs/ca-certificates.crt")
	assert.NilError(t, err)
	zone, err := os.Stat(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip"))
	assert.NilError(t, err)
	const head = "FROM golang@sha256:" + "0000000000000000000000000000000000000000000000000000000000000000" + " AS base\nRUN set -eu; mkdir -m 1777 /out/tmp; cp /usr/local/go/lib/time/zoneinfo.zip /out/zoneinfo.zip\n"
	const copies = "FROM scratch\nCOPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt\nCOPY --from=build /out/ /\n"
	tests := []struct {
		name      string
		text      string
		wantBytes int64
		wantErr   string
	}{
		{name: "the bundle, the time zones and a checksum, through a stage built FROM another",
			text:      head + "FROM base AS build\nRUN cd /out && sha256sum zoneinfo.zip > zoneinfo.zip.sha256\n" + copies,
			wantBytes: ca.Size() + zone.Size() + int64(len(strings.Repeat("0", 64)+"  zoneinfo.zip\n"))},
		{name: "an extra copy counts", text: head + "FROM base AS build\n" + copies + "COPY --from=build /out/zoneinfo.zip /again.zip\n",
			wantBytes: ca.Size() + 2*zone.Size()},
		{name: "an unknown command is refused", text: head + "FROM base AS build\nRUN curl -o /out/big https://example.invalid/big\n" + copies,
			wantErr: "the size test cannot play"},
		{name: "a go build is refused when compiling is off", text: head + "FROM base AS build\nRUN CGO_ENABLED=0 go build -o /out/x ./pkg/cmd/x\n" + copies,
			wantErr: "compiling is off"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, _, err := metaFinalStageContent(t, tc.text, false)
			if tc.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tc.wantErr))
				return
			}
			assert.NilError(t, err)
			var total int64
			for _, f := range files {
				total += f.size
			}
			assert.Check(t, is.Equal(total, tc.wantBytes), "%v", files)
		})
	}
}
