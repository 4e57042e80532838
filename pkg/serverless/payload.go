package serverless

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/org/runpod-gpu/pkg/serverless/jobwire"
)

// PayloadVersion is the payload file's format version.
const PayloadVersion = 1

// Payload is the source-only archive a job carries, as the payload file
// (--payload) stores it. SHA256 is over Archive's bytes: the checksum a person
// approves and the worker verifies.
type Payload struct {
	Version int      `json:"version"`
	SHA256  string   `json:"payload_sha256"`
	Bytes   int      `json:"bytes"`
	Files   []string `json:"files"`
	// Skipped lists what the source tree had but the payload leaves out on
	// purpose (links, special files), so the reviewer sees it.
	Skipped []string `json:"skipped,omitempty"`
	Archive []byte   `json:"archive_base64"` // base64 in JSON
}

// Directories never sent: version control, dependencies, environments and
// caches (compared in any case).
var excludedDirs = []string{
	".git", ".hg", ".svn", "node_modules", ".venv", "venv", ".env", "__pycache__", ".pytest_cache",
	".mypy_cache", ".ruff_cache", ".tox", ".nox", ".cache", ".ipynb_checkpoints", ".eggs",
}

// CredentialPatterns are the credential files and directories a payload never
// carries, matched in any case against every file's name (a pattern ending
// in "/" against every directory's): environment files, git, netrc, npm and
// PyPI credentials, AWS and SSH directories, SSH keys and PEM files, Docker's
// config directory, credentials.json, gcloud's application default
// credentials, kubeconfig and GnuPG directories, private keys and
// PKCS#12 bundles, Vault tokens and Terraform variable files. The
// Serverless page (.github/docs/serverless.md) lists the same patterns.
var CredentialPatterns = []string{
	".env*", ".git-credentials", ".netrc", "_netrc", ".npmrc", ".pypirc", ".aws/", ".ssh/", "id_*", "*.pem",
	".docker/", "credentials.json", "application_default_credentials.json", ".kube/", ".gnupg/",
	"*.key", "*.p12", "*.pfx", ".vault-token", "*.tfvars", "*.tfvars.json",
}

// credential reports whether a file name (dir false) or a directory name
// (dir true) matches one of CredentialPatterns, in any case.
func credential(name string, dir bool) bool {
	lower := strings.ToLower(name)
	for _, p := range CredentialPatterns {
		pattern, isDir := strings.CutSuffix(p, "/")
		if isDir != dir {
			continue
		}
		if ok, _ := path.Match(pattern, lower); ok {
			return true
		}
	}
	return false
}

// excludedDir reports whether a directory is never sent.
func excludedDir(name string) bool {
	return slices.ContainsFunc(excludedDirs, func(d string) bool { return strings.EqualFold(d, name) }) || credential(name, true)
}

// excludedFile reports whether a file is never sent: a credential, or
// compiled bytecode and desktop litter.
func excludedFile(name string) bool {
	lower := strings.ToLower(name)
	return credential(name, false) || lower == ".ds_store" || strings.HasSuffix(lower, ".pyc") || strings.HasSuffix(lower, ".pyo")
}

// PayloadOptions change what a payload leaves out.
type PayloadOptions struct {
	// IncludeIgnored sends files git ignores (the .gitignore files of the
	// tree and of its work tree's directories above it, and
	// .git/info/exclude), which are left out by default: build outputs,
	// local settings and secrets are what such files usually name.
	IncludeIgnored bool
}

// BuildPayload archives the source tree at root: regular files only, in
// sorted order, with fixed owners, modes and times, so the same tree always
// gives the same checksum. Links and special files are skipped and listed;
// credential files and git-ignored files are left out.
func BuildPayload(root string, lim jobwire.Limits) (*Payload, error) {
	return BuildPayloadWith(root, lim, PayloadOptions{})
}

// BuildPayloadWith is BuildPayload with options.
func BuildPayloadWith(root string, lim jobwire.Limits, opts PayloadOptions) (*Payload, error) {
	files, skipped, err := payloadFiles(root, lim, opts)
	if err != nil {
		return nil, err
	}
	sort := slices.Clone(files)
	slices.Sort(sort)
	archive, err := packPayload(root, sort, lim)
	if err != nil {
		return nil, err
	}
	if int64(len(archive)) > lim.MaxCompressed {
		return nil, fmt.Errorf("payload: %w", &jobwire.ArchiveError{Reason: fmt.Sprintf("compressed size %d bytes exceeds the limit of %d bytes (the /run request limit is 10 MB)", len(archive), lim.MaxCompressed)})
	}
	sum := sha256.Sum256(archive)
	return &Payload{Version: PayloadVersion, SHA256: hex.EncodeToString(sum[:]), Bytes: len(archive), Files: sort, Skipped: skipped, Archive: archive}, nil
}

// payloadFiles lists the regular files under root that the payload carries
// (slash-separated, relative to root) and those it skips as not regular.
func payloadFiles(root string, lim jobwire.Limits, opts PayloadOptions) (files, skipped []string, _ error) {
	ignores := &gitIgnores{}
	if !opts.IncludeIgnored {
		var err error
		if ignores, err = loadGitIgnores(root); err != nil {
			return nil, nil, fmt.Errorf("payload: %w", err)
		}
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		switch {
		case d.IsDir() && (excludedDir(d.Name()) || ignores.ignored(rel, true)):
			return filepath.SkipDir
		case d.IsDir():
			if !opts.IncludeIgnored {
				ignores.enter(rel)
			}
			return nil
		case excludedFile(d.Name()) || ignores.ignored(rel, false):
			return nil
		case !d.Type().IsRegular():
			skipped = append(skipped, rel)
			return nil
		}
		if _, err := jobwire.CheckName(rel); err != nil {
			return fmt.Errorf("payload: %w", err)
		}
		files = append(files, rel)
		if len(files) > lim.MaxEntries {
			return fmt.Errorf("payload: more than %d files under %s", lim.MaxEntries, root)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return files, skipped, nil
}

// packPayload archives the files (in that order) as a reproducible
// tar.gz: fixed modes and times, so equal sources give an equal digest.
func packPayload(root string, files []string, lim jobwire.Limits) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	for _, rel := range files {
		data, info, err := readRegular(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("payload: %w", err)
		}
		if int64(len(data)) > lim.MaxFile {
			return nil, fmt.Errorf("payload: %s is %d bytes; the per-file limit is %d", rel, len(data), lim.MaxFile)
		}
		mode := int64(0o644)
		if info.Mode()&0o100 != 0 {
			mode = 0o755
		}
		h := &tar.Header{Name: rel, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readRegular reads a file that must still be regular when opened (not
// swapped for a link between the walk and the read).
func readRegular(p string) ([]byte, os.FileInfo, error) {
	info, err := os.Lstat(p)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is no longer a regular file", p)
	}
	data, err := os.ReadFile(p)
	return data, info, err
}

// WritePayload stores p at file, atomically; an existing file is replaced
// (re-preparing after a source change is expected).
func WritePayload(file string, p *Payload) error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(file, append(data, '\n'), false)
}

// ReadPayload loads a payload file and checks it: the checksum matches the
// archive, and the archive passes the same checks as a result archive.
func ReadPayload(file string, lim jobwire.Limits) (*Payload, error) {
	p, err := readJSONFile[Payload](file, "payload", "a payload file")
	if err != nil {
		return nil, err
	}
	if p.Version != PayloadVersion {
		return nil, fmt.Errorf("payload %s: version %d: want %d (re-run prepare)", file, p.Version, PayloadVersion)
	}
	if got := jobwire.SHA256Hex(p.Archive); got != p.SHA256 {
		return nil, fmt.Errorf("payload %s: payload_sha256 %q does not match the archive's %s (the file was edited; re-run prepare)", file, p.SHA256, got)
	}
	entries, err := jobwire.CheckArchive(p.Archive, lim)
	if err != nil {
		return nil, fmt.Errorf("payload %s: %w", file, err)
	}
	for _, e := range entries {
		if e.Dir || !sourceName(e.Name) {
			return nil, fmt.Errorf("payload %s: entry %q is not a source file the payload may carry", file, e.Name)
		}
	}
	return p, nil
}

// sourceName reports whether a payload member passes the exclusion rules.
func sourceName(name string) bool {
	for _, part := range strings.Split(path.Dir(name), "/") {
		if excludedDir(part) {
			return false
		}
	}
	return !excludedFile(path.Base(name))
}

// ErrNotApproved is returned when a run's approved checksum is missing or differs.
var ErrNotApproved = errors.New("payload not approved")

// ApprovedPayload is a payload whose checksum a person approved. Only Approve
// makes one, so holding it proves the check ran: Lane.Run takes it and does
// not check again. The zero value approves nothing.
type ApprovedPayload struct {
	payload *Payload
	sha256  string // the approved checksum, kept apart from later edits of payload
}

// Approve refuses a payload whose checksum differs from the approved one, and
// otherwise returns it approved; it is the process's one approval check. Its
// errors name the approved checksum, not the flag or input that carried it.
func Approve(p *Payload, approved string) (ApprovedPayload, error) {
	approved = strings.ToLower(strings.TrimSpace(approved))
	switch {
	case approved == "":
		return ApprovedPayload{}, fmt.Errorf("%w: the approved checksum is empty: review the payload, then approve the payload_sha256 that prepare printed", ErrNotApproved)
	case len(approved) != 64 || strings.Trim(approved, "0123456789abcdef") != "":
		return ApprovedPayload{}, fmt.Errorf("%w: approved checksum %q: want 64 hex digits", ErrNotApproved, approved)
	case approved != p.SHA256:
		return ApprovedPayload{}, fmt.Errorf("%w: approved checksum %s differs from the payload's %s (the source changed since review?)", ErrNotApproved, approved, p.SHA256)
	}
	return ApprovedPayload{payload: p, sha256: approved}, nil
}

// Payload is the approved payload, nil for the zero value.
func (a ApprovedPayload) Payload() *Payload { return a.payload }

// SHA256 is the approved checksum, "" for the zero value.
func (a ApprovedPayload) SHA256() string { return a.sha256 }
