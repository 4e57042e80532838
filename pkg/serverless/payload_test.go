package serverless

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		assert.NilError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		assert.NilError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

// member is one regular file of a test payload archive.
type member struct{ name, body string }

// makeArchive packs members as regular files (the payload's only kind),
// without the checks BuildPayload applies, so that ReadPayload meets them.
func makeArchive(t testing.TB, members ...member) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, m := range members {
		h := &tar.Header{Name: m.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m.body)), Format: tar.FormatPAX}
		assert.NilError(t, tw.WriteHeader(h))
		_, err := tw.Write([]byte(m.body))
		assert.NilError(t, err)
	}
	assert.NilError(t, tw.Close())
	assert.NilError(t, zw.Close())
	return buf.Bytes()
}

func TestBuildPayloadIsSourceOnlyAndDeterministic(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"src/kernel.cu": "__global__ void k(){}", "tests/test_k.py": "def test(): pass", "pyproject.toml": "[project]",
		".git/config": "[core]", ".env": "SECRET=1", ".env.local": "SECRET=2", "node_modules/x/index.js": "x",
		"src/__pycache__/k.cpython-311.pyc": "bytecode", ".venv/bin/python": "py", "src/mod.pyc": "b",
	})
	assert.NilError(t, os.Symlink("/etc/passwd", filepath.Join(root, "src", "link")))

	p, err := BuildPayload(root, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	assert.DeepEqual(t, p.Files, []string{"pyproject.toml", "src/kernel.cu", "tests/test_k.py"})
	assert.DeepEqual(t, p.Skipped, []string{"src/link"})
	assert.Check(t, is.Equal(p.SHA256, jobwire.SHA256Hex(p.Archive)))

	// Same tree, other times: same checksum.
	future := filepath.Join(root, "src", "kernel.cu")
	assert.NilError(t, os.Chtimes(future, p2time(), p2time()))
	again, err := BuildPayload(root, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(again.SHA256, p.SHA256))

	file := filepath.Join(t.TempDir(), "payload.json")
	assert.NilError(t, WritePayload(file, p))
	back, err := ReadPayload(file, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(back.SHA256, p.SHA256))
}

func TestBuildPayloadTooLarge(t *testing.T) {
	root := t.TempDir()
	// Random content does not compress; a small cap stands in for 7 MB.
	big := make([]byte, 4096)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(big)
	assert.NilError(t, os.WriteFile(filepath.Join(root, "noise.bin"), big, 0o644))
	_, err := BuildPayload(root, jobwire.Limits{MaxCompressed: 1024, MaxFile: 1 << 20, MaxTotal: 1 << 20, MaxEntries: 10})
	assert.ErrorContains(t, err, "compressed size")
	assert.Check(t, errors.Is(err, jobwire.ErrArchive))
}

func TestReadPayloadRefusesEdits(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.py": "print(1)"})
	p, err := BuildPayload(root, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	dir := t.TempDir()

	edited := *p
	edited.Archive = makeArchive(t, member{name: "a.py", body: "print(2)"})
	file := filepath.Join(dir, "edited.json")
	assert.NilError(t, WritePayload(file, &edited))
	_, err = ReadPayload(file, jobwire.DefaultPayloadLimits)
	assert.ErrorContains(t, err, "does not match the archive")

	// A consistent checksum does not make a traversal or a secret acceptable.
	for name, m := range map[string]member{"traversal": {name: "../x", body: "x"}, "env": {name: ".env", body: "K=V"}, "git": {name: ".git/config", body: "x"}} {
		bad := Payload{Version: PayloadVersion, Archive: makeArchive(t, m)}
		bad.SHA256 = jobwire.SHA256Hex(bad.Archive)
		file := filepath.Join(dir, name+".json")
		assert.NilError(t, WritePayload(file, &bad))
		_, err = ReadPayload(file, jobwire.DefaultPayloadLimits)
		assert.Check(t, err != nil, name)
	}

	raw, _ := json.Marshal(map[string]any{"version": 9})
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "v9.json"), raw, 0o644))
	_, err = ReadPayload(filepath.Join(dir, "v9.json"), jobwire.DefaultPayloadLimits)
	assert.ErrorContains(t, err, "version 9")
}

func TestApprove(t *testing.T) {
	p := &Payload{SHA256: strings.Repeat("ab", 32)}
	cases := []struct{ approved, want string }{
		{"", "is empty"},
		{"xyz", "want 64 hex digits"},
		{strings.Repeat("cd", 32), "differs from the payload's"},
		{strings.ToUpper(p.SHA256), ""},
		{p.SHA256, ""},
	}
	for _, tc := range cases {
		_, err := Approve(p, tc.approved)
		if tc.want == "" {
			assert.Check(t, err)
			continue
		}
		assert.Check(t, is.ErrorContains(err, tc.want), tc.approved)
		assert.Check(t, errors.Is(err, ErrNotApproved))
	}
}

// TestApprovedPayloadKeepsTheApprovedChecksum: the approval is a value made
// once; what a run sends is the checksum approved, whatever the payload
// says afterwards, and the zero value approves nothing.
func TestApprovedPayloadKeepsTheApprovedChecksum(t *testing.T) {
	reviewed := strings.Repeat("ab", 32)
	p := &Payload{SHA256: reviewed}
	approved, err := Approve(p, " "+strings.ToUpper(reviewed)+"\n")
	assert.NilError(t, err)
	p.SHA256 = strings.Repeat("cd", 32) // an edit after the review
	assert.Check(t, is.Equal(approved.SHA256(), reviewed))
	assert.Check(t, approved.Payload() == p)

	var zero ApprovedPayload
	assert.Check(t, zero.Payload() == nil)
	assert.Check(t, is.Equal(zero.SHA256(), ""))
}

// TestPayloadLeavesOutGitIgnoredFiles: what the tree's .gitignore files, a
// nested one and those of the work tree above the root, and
// .git/info/exclude name stays out by default (a "!" re-includes, a
// directory rule skips the whole directory); IncludeIgnored sends it.
func TestPayloadLeavesOutGitIgnoredFiles(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "gpu")
	writeTree(t, top, map[string]string{
		".git/HEAD":         "ref: refs/heads/main\n",
		".git/info/exclude": "scratch.txt\n",
		".gitignore":        "*.log\n/gpu/data/\n",
	})
	writeTree(t, root, map[string]string{
		".gitignore":           "# local builds\nbuild/\n*.o\n!keep.o\nsecrets/**/*.yaml\nlocal.cfg   \n",
		"src/kernel.cu":        "k",
		"src/kernel.o":         "obj",
		"src/keep.o":           "kept",
		"src/run.log":          "log",
		"build/out.bin":        "bin",
		"data/big.bin":         "data",
		"scratch.txt":          "scratch",
		"local.cfg":            "cfg",
		"secrets/a/b/x.yaml":   "s",
		"secrets/readme.md":    "r",
		"tests/.gitignore":     "fixtures/*.tmp\n",
		"tests/fixtures/a.tmp": "tmp",
		"tests/fixtures/a.txt": "txt",
		"tests/a.tmp":          "not under fixtures",
	})
	p, err := BuildPayload(root, jobwire.DefaultPayloadLimits)
	assert.NilError(t, err)
	assert.Check(t, is.DeepEqual(p.Files, []string{".gitignore", "secrets/readme.md", "src/keep.o", "src/kernel.cu",
		"tests/.gitignore", "tests/a.tmp", "tests/fixtures/a.txt"}))

	all, err := BuildPayloadWith(root, jobwire.DefaultPayloadLimits, PayloadOptions{IncludeIgnored: true})
	assert.NilError(t, err)
	assert.Check(t, is.Len(all.Files, 15))
}

func FuzzParseIgnore(f *testing.F) {
	for _, s := range []string{"*.o\n!keep.o\n", "/a/**/b/\n", "[\n\\!x\n#c\n", "**\n", "a/b/c"} {
		f.Add(s, "a/b/c.o", true)
	}
	f.Fuzz(func(t *testing.T, text, rel string, dir bool) {
		for _, r := range parseIgnore(strings.NewReader(text)) {
			_ = r.matches(rel, dir) // any text parses, any path matches or not, without a panic
		}
	})
}

// TestPayloadNeverCarriesCredentials: one case per entry of the documented
// CredentialPatterns, each in another case than the pattern spells it; the
// payload leaves them out when it is built and refuses them when it is read.
func TestPayloadNeverCarriesCredentials(t *testing.T) {
	cases := map[string][]string{
		".env*":                                {".ENV", ".env.Production", "api/.Envrc"},
		".git-credentials":                     {".Git-Credentials", "home/.git-credentials"},
		".netrc":                               {".NETRC", "ci/.netrc"},
		"_netrc":                               {"_NetRC"},
		".npmrc":                               {"web/.NPMRC"},
		".pypirc":                              {".PyPIrc"},
		".aws/":                                {".AWS/credentials", "deploy/.aws/config"},
		".ssh/":                                {".Ssh/known_hosts", "home/.ssh/authorized_keys"},
		"id_*":                                 {"ID_RSA", "keys/id_ed25519.pub", "keys/Id_Ecdsa"},
		"*.pem":                                {"server.PEM", "certs/client.pem"},
		".docker/":                             {".docker/config.json", "ci/.Docker/config.json"},
		"credentials.json":                     {"credentials.json", "deploy/Credentials.JSON"},
		"application_default_credentials.json": {".config/gcloud/application_default_credentials.json"},
		".kube/":                               {".kube/config", "ops/.KUBE/config"},
		".gnupg/":                              {".gnupg/private-keys-v1.d/key", "home/.GnuPG/pubring.kbx"},
		"*.key":                                {"tls/server.key", "Signing.KEY"},
		"*.p12":                                {"certs/client.p12"},
		"*.pfx":                                {"certs/Client.PFX"},
		".vault-token":                         {".vault-token", "home/.Vault-Token"},
		"*.tfvars":                             {"terraform.tfvars", "infra/prod.auto.tfvars"},
		"*.tfvars.json":                        {"infra/terraform.tfvars.json"},
	}
	for _, pattern := range CredentialPatterns {
		assert.Check(t, len(cases[pattern]) > 0, "no case for the documented pattern %q", pattern)
	}
	assert.Check(t, is.Len(cases, len(CredentialPatterns)), "a case for a pattern that is not documented")
	for pattern, names := range cases {
		t.Run(pattern, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{"src/kernel.cu": "__global__ void k(){}"}
			for _, n := range names {
				files[n] = "SECRET"
			}
			writeTree(t, root, files)
			p, err := BuildPayload(root, jobwire.DefaultPayloadLimits)
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(p.Files, []string{"src/kernel.cu"}), "%s", pattern)

			for _, n := range names {
				crafted := makeArchive(t, member{"src/kernel.cu", "k"}, member{n, "SECRET"})
				file := filepath.Join(t.TempDir(), "payload.json")
				data, err := json.Marshal(Payload{Version: PayloadVersion, SHA256: jobwire.SHA256Hex(crafted), Bytes: len(crafted), Archive: crafted})
				assert.NilError(t, err)
				assert.NilError(t, os.WriteFile(file, data, 0o600))
				_, err = ReadPayload(file, jobwire.DefaultPayloadLimits)
				assert.Check(t, is.ErrorContains(err, "is not a source file the payload may carry"), "%s", n)
			}
		})
	}
}
