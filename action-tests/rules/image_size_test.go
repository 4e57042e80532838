package rules

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// metaMaxImageBinary is the most the image's one action binary may weigh:
// one build of every action came to 12.6 MB, where a program per action
// came to about 72 MB.
const metaMaxImageBinary = 20_000_000

// metaImageBuildValues stand in for the build arguments and the checksums
// the Dockerfile's build stage computes, so that the injected defaults can be
// found in the binary.
var metaImageBuildValues = map[string]string{
	"TARGETOS": "linux", "TARGETARCH": "amd64", "VERSION": "v0.0.0-sizetest",
	"PROOF_URL":     "https://example.invalid/sizetest/cuda-smoke",
	"WORKER_URL":    "https://example.invalid/sizetest/serverless-worker",
	"proof_sha256":  strings.Repeat("a1", 32),
	"worker_sha256": strings.Repeat("b2", 32),
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

// metaImageBuildCommand reads the Dockerfile's build of the action binary:
// its environment and its go build arguments, variables expanded.
func metaImageBuildCommand(t *testing.T) (env, args []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(metaRepoRoot, "Dockerfile"))
	assert.NilError(t, err)
	for _, st := range metaParseDockerfile(string(data)) {
		for _, in := range st.instructions {
			if in.keyword != "RUN" || !strings.Contains(in.args, metaActionsCmd) {
				continue
			}
			for _, part := range strings.Split(strings.ReplaceAll(in.args, "&&", ";"), ";") {
				if !strings.Contains(part, "go build") {
					continue
				}
				words, err := metaShellWords(strings.TrimSpace(part), metaImageBuildValues)
				assert.NilError(t, err)
				for len(words) > 0 && strings.Contains(words[0], "=") {
					env, words = append(env, words[0]), words[1:]
				}
				assert.Assert(t, len(words) > 2 && words[0] == "go" && words[1] == "build", "%q", part)
				return env, words[2:]
			}
		}
	}
	t.Fatalf("the Dockerfile has no go build of %s", metaActionsCmd)
	return nil, nil
}

// TestMetaImageBinaryIsSmall builds the image's action binary exactly as the
// Dockerfile does (its environment, flags and -X defaults; only the output
// path and the source directory differ) and checks that it stays small, is
// static, and carries the release defaults: -X on a name that does not exist
// is silently ignored, so a moved variable would ship without its proof URL.
func TestMetaImageBinaryIsSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the image binary with -trimpath (a full compile)")
	}
	env, args := metaImageBuildCommand(t)
	out := filepath.Join(t.TempDir(), metaActionsBinary)
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-C": // the build stage's /src is this repository
			args = append(args[:i], args[i+2:]...)
			i--
		case "-o":
			args[i+1] = out
		}
	}
	assert.Assert(t, is.Contains(args, "-trimpath"))
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = metaRepoRoot
	cmd.Env = append(os.Environ(), env...)
	output, err := cmd.CombinedOutput()
	assert.NilError(t, err, "go build %s\n%s", strings.Join(args, " "), output)

	info, err := os.Stat(out)
	assert.NilError(t, err)
	t.Logf("%s: %d bytes (%.1f MB), built with %s go build %s", metaActionsBinary, info.Size(), float64(info.Size())/1e6,
		strings.Join(env, " "), strings.Join(args, " "))
	assert.Check(t, info.Size() <= metaMaxImageBinary, "%s is %d bytes: want at most %d (one program for every action)",
		metaActionsBinary, info.Size(), metaMaxImageBinary)

	interp, needed := metaLinking(t, out)
	assert.Check(t, interp == "", "%s asks for the loader %s: the image is FROM scratch", metaActionsBinary, interp)
	assert.Check(t, is.Len(needed, 0), "%s needs shared libraries", metaActionsBinary)

	data, err := os.ReadFile(out)
	assert.NilError(t, err)
	for _, k := range []string{"VERSION", "PROOF_URL", "proof_sha256", "WORKER_URL", "worker_sha256"} {
		assert.Check(t, strings.Contains(string(data), metaImageBuildValues[k]), "the Dockerfile's -X for %s did not reach the binary", k)
	}
}
