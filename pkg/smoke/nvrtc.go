package smoke

import (
	"archive/tar"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// NVRTC is the part of the NVRTC runtime-compilation API the proof calls.
type NVRTC interface {
	// Version calls nvrtcVersion.
	Version() (Version, error)
	// Compile runs nvrtcCreateProgram, nvrtcCompileProgram, nvrtcGetPTX and
	// nvrtcDestroyProgram, returning the PTX text; a failed compile is a *CallError with Log.
	Compile(source, name string, options []string) (string, error)
}

// NVRTCPin is a pinned NVRTC package: where to fetch it and the SHA-256 it must have.
type NVRTCPin struct {
	URL    string
	SHA256 string
}

// MaxPackageBytes bounds an NVRTC download (the 12.x packages are ~60 MB), so a wrong URL cannot
// fill the pod's disk before the checksum fails.
const MaxPackageBytes = 512 << 20

// validate checks the pin's shape; flag and env name the tier's configuration keys.
func (p NVRTCPin) validate(tier TierName) error {
	urlFlag, shaFlag := "nvrtc-url-"+string(tier), "nvrtc-sha256-"+string(tier)
	urlEnv, shaEnv := envName(urlFlag), envName(shaFlag)
	if (p.URL == "") != (p.SHA256 == "") {
		return &ConfigError{Flag: urlFlag, Env: urlEnv, Value: p.URL, Want: fmt.Sprintf("must be given together with --%s", shaFlag)}
	}
	if p.URL == "" {
		return nil
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{Flag: urlFlag, Env: urlEnv, Value: p.URL, Want: "want an http or https URL"}
	}
	if u.User != nil {
		// The pod holds no credential worth sending, and one in a URL would be logged.
		return &ConfigError{Flag: urlFlag, Env: urlEnv, Value: u.Redacted(), Want: "must not carry credentials"}
	}
	if _, err := InstallerFor(p.URL); err != nil {
		return &ConfigError{Flag: urlFlag, Env: urlEnv, Value: p.URL, Want: err.Error()}
	}
	if b, err := hex.DecodeString(p.SHA256); err != nil || len(b) != sha256.Size {
		return &ConfigError{Flag: shaFlag, Env: shaEnv, Value: p.SHA256, Want: "want 64 hexadecimal digits"}
	}
	return nil
}

// Download fetches pin.URL into dst with fetch (a plain GET, no credentials)
// and verifies its SHA-256 while writing. On a mismatch dst is removed and the
// error wraps ErrChecksumMismatch, so nothing unverified is ever handed to an
// installer. It returns the number of bytes fetched.
func Download(ctx context.Context, fetch Fetcher, pin NVRTCPin, dst string) (int64, error) {
	body, err := fetch(ctx, pin.URL)
	if err != nil {
		return 0, fmt.Errorf("download %s: %w", pin.URL, err)
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		body.Close()
		return 0, fmt.Errorf("download %s: %w", pin.URL, err)
	}
	hash := sha256.New()
	n, copyErr := io.Copy(io.MultiWriter(f, hash), io.LimitReader(body, MaxPackageBytes+1))
	fetchErr := body.Close() // the transfer's own verdict (an HTTP error, a cut connection)
	closeErr := f.Close()
	fail := func(err error) (int64, error) {
		os.Remove(dst)
		return n, err
	}
	switch {
	case n > MaxPackageBytes:
		return fail(fmt.Errorf("download %s: larger than %d bytes", pin.URL, MaxPackageBytes))
	case fetchErr != nil:
		return fail(fmt.Errorf("download %s: %w", pin.URL, fetchErr))
	case copyErr != nil:
		return fail(fmt.Errorf("download %s: %w", pin.URL, copyErr))
	case closeErr != nil:
		return fail(fmt.Errorf("download %s: %w", pin.URL, closeErr))
	}
	if got := hex.EncodeToString(hash.Sum(nil)); !strings.EqualFold(got, pin.SHA256) {
		return fail(fmt.Errorf("%w: %s has sha256 %s, pinned %s", ErrChecksumMismatch, pin.URL, got, strings.ToLower(pin.SHA256)))
	}
	return n, nil
}

// Installer unpacks a verified package into a private directory.
//
// The proof never installs system-wide: a .deb is unpacked with `dpkg-deb -x` (what `dpkg -x`
// runs) rather than `dpkg -i`, which needs no root, writes no dpkg database, runs no maintainer
// scripts and needs no package-index refresh; the library is then loaded by full path, so no
// ldconfig either. A failed proof leaves the image exactly as it was.
type Installer interface {
	// Install unpacks archive into dir, an existing empty directory.
	Install(ctx context.Context, archive, dir string) error
}

// InstallerFor picks the installer for a package by the URL's file name: .deb → DebInstaller;
// .tar, .tar.gz, .tgz → TarInstaller.
func InstallerFor(packageURL string) (Installer, error) {
	name := packageURL
	if u, err := url.Parse(packageURL); err == nil {
		name = path.Base(u.Path)
	}
	switch {
	case strings.HasSuffix(name, ".deb"):
		return DebInstaller{}, nil
	case strings.HasSuffix(name, ".tar"), strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		return TarInstaller{}, nil
	}
	return nil, fmt.Errorf("package %q: want a .deb, .tar, .tar.gz or .tgz file", name)
}

// DebInstaller unpacks a Debian package with `dpkg-deb -x`.
type DebInstaller struct {
	// DpkgDeb is the dpkg-deb program; empty means "dpkg-deb" on PATH.
	DpkgDeb string
}

// Install runs `dpkg-deb -x archive dir`.
func (d DebInstaller) Install(ctx context.Context, archive, dir string) error {
	prog := cmp.Or(d.DpkgDeb, "dpkg-deb")
	out, err := exec.CommandContext(ctx, prog, "-x", archive, dir).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -x %s: %w: %s", prog, filepath.Base(archive), err, oneLine(string(out)))
	}
	return nil
}

// TarInstaller unpacks a tar archive, gzip-compressed or not, in pure Go. It accepts directories,
// regular files and relative symbolic links without ".." (NVIDIA's archives link
// libnvrtc.so.12 → libnvrtc.so.12.8.93), and rejects every other entry and any path that would
// land outside dir.
type TarInstaller struct{}

// maxUnpackedBytes bounds what one archive may write.
const maxUnpackedBytes = 4 << 30

// Install unpacks archive into dir.
func (TarInstaller) Install(ctx context.Context, archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	var magic [2]byte
	if _, err := io.ReadFull(f, magic[:]); err == nil && magic == [2]byte{0x1f, 0x8b} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(archive), err)
		}
		defer gz.Close()
		r = gz
	} else if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return untar(ctx, tar.NewReader(r), dir)
}

func untar(ctx context.Context, tr *tar.Reader, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var written int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if name == "." {
			continue
		}
		if !fs.ValidPath(name) {
			return fmt.Errorf("tar entry %q: path leaves the install directory", hdr.Name)
		}
		if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o755); err != nil {
				return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
			}
		case tar.TypeReg:
			written += hdr.Size
			if hdr.Size < 0 || written > maxUnpackedBytes {
				return fmt.Errorf("tar entry %q: archive unpacks to more than %d bytes", hdr.Name, int64(maxUnpackedBytes))
			}
			if err := writeTarFile(root, name, hdr, tr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			// Links may only point down: with ".." a link through another link ("d -> .",
			// "e -> d/..") can lead out of dir even when each looks harmless on its own.
			target := hdr.Linkname
			if path.IsAbs(target) || slices.Contains(strings.Split(target, "/"), "..") || !fs.ValidPath(path.Join(path.Dir(name), target)) {
				return fmt.Errorf("tar entry %q: link to %q leaves the install directory", hdr.Name, target)
			}
			if err := root.Symlink(target, name); err != nil {
				return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
			}
		default:
			return fmt.Errorf("tar entry %q: unsupported type %q", hdr.Name, hdr.Typeflag)
		}
	}
}

func writeTarFile(root *os.Root, name string, hdr *tar.Header, r io.Reader) error {
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fs.FileMode(hdr.Mode).Perm()|0o600)
	if err != nil {
		return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
	}
	if _, err := io.Copy(out, io.LimitReader(r, hdr.Size)); err != nil {
		out.Close()
		return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
	}
	return out.Close()
}

// FindNVRTCLibrary returns the path under dir of the versioned NVRTC library for CUDA major
// release major, e.g. ".../targets/x86_64-linux/lib/libnvrtc.so.12". The versioned soname is
// the runtime library; a bare libnvrtc.so belongs to development packages and is never used.
func FindNVRTCLibrary(dir string, major int) (string, error) {
	want := fmt.Sprintf("libnvrtc.so.%d", major)
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == want {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%w: the NVRTC package has no %s", ErrLibraryMissing, want)
	}
	slices.Sort(found)
	return found[0], nil
}
