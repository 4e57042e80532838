package actionimage

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Locate maps a path of a build stage to where that file is on this machine
// (the stage's exported root, or a stand-in such as this machine's CA bundle).
type Locate func(stage, p string) string

// StageRoots is a Locate from each stage's exported root directory.
type StageRoots map[string]string

// Locate is the path under the stage's root; "" for an unknown stage.
func (r StageRoots) Locate(stage, p string) string {
	root, ok := r[stage]
	if !ok {
		return ""
	}
	return filepath.Join(root, filepath.FromSlash(p))
}

// Entry is one file, directory or symbolic link of the image.
type Entry struct {
	Path   string      // absolute, without a trailing slash
	Mode   fs.FileMode // type and permission bits (setuid, setgid and sticky included)
	UID    int
	GID    int
	Size   int64  // regular files only
	SHA256 string // regular files only, hex
	Link   string // symbolic links only
	local  string // where the content is read from
}

// epoch is every entry's and the image's time: the same outputs give the same digest.
var epoch = time.Unix(0, 0).UTC()

// Entries lists what the definition's COPY lines put into the image, read
// from the build outputs locate finds, as Docker's COPY does: a directory
// source copies its content, a file source lands at the destination (or in
// it, when it ends with /), and the parents of each destination are created.
// Later copies replace earlier ones. A missing source is an error.
func Entries(def *Definition, locate Locate) ([]Entry, error) {
	byPath := map[string]Entry{}
	for _, c := range def.Copies {
		for _, src := range c.Sources {
			if err := copyEntries(c, src, locate, byPath); err != nil {
				return nil, fmt.Errorf("Dockerfile line %d: COPY --from=%s %s: %w", c.Line, c.From, src, err)
			}
		}
	}
	out := make([]Entry, 0, len(byPath))
	for _, e := range byPath {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// copyEntries adds what one source of a COPY line puts into the image.
func copyEntries(c Copy, src string, locate Locate, byPath map[string]Entry) error {
	local := locate(c.From, src)
	if local == "" {
		return fmt.Errorf("no outputs of stage %s to copy from", c.From)
	}
	info, err := os.Lstat(local)
	if err != nil {
		return err
	}
	add := func(dst, from string, info fs.FileInfo) error {
		e, err := entryOf(dst, from, info, c)
		if err != nil {
			return err
		}
		for dir := path.Dir(dst); dir != "/"; dir = path.Dir(dir) {
			if _, ok := byPath[dir]; !ok {
				byPath[dir] = Entry{Path: dir, Mode: fs.ModeDir | 0o755}
			}
		}
		byPath[dst] = e
		return nil
	}
	if !info.IsDir() {
		dst := c.Dest
		if strings.HasSuffix(dst, "/") {
			dst = path.Join(dst, path.Base(src))
		}
		return add(path.Clean(dst), local, info)
	}
	return filepath.WalkDir(local, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(local, p)
		if err != nil {
			return err
		}
		dst := path.Join(c.Dest, filepath.ToSlash(rel))
		if _, exists := byPath[dst]; dst == "/" || (rel == "." && exists) {
			return nil // the image's root is no entry; an existing directory keeps its mode
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return add(dst, p, info)
	})
}

// entryOf describes one copied file as the image will hold it.
func entryOf(dst, local string, info fs.FileInfo, c Copy) (Entry, error) {
	e := Entry{Path: dst, UID: c.UID, GID: c.GID, local: local}
	perm := info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if c.Mode >= 0 {
		perm = fs.FileMode(c.Mode) & fs.ModePerm
		if c.Mode&0o1000 != 0 {
			perm |= fs.ModeSticky
		}
	}
	switch {
	case info.Mode().IsRegular():
		data, err := os.ReadFile(local)
		if err != nil {
			return Entry{}, err
		}
		sum := sha256.Sum256(data)
		e.Mode, e.Size, e.SHA256 = perm, int64(len(data)), hex.EncodeToString(sum[:])
	case info.IsDir():
		e.Mode = fs.ModeDir | perm
	case info.Mode()&fs.ModeSymlink != 0:
		link, err := os.Readlink(local)
		if err != nil {
			return Entry{}, err
		}
		e.Mode, e.Link = fs.ModeSymlink|0o777, link
	default:
		return Entry{}, fmt.Errorf("%s: %s is neither a file, a directory nor a symbolic link", local, info.Mode().Type())
	}
	return e, nil
}

// Platform is the image's operating system and architecture, such as linux/amd64.
type Platform struct{ OS, Architecture string }

// ParsePlatform reads "os/arch".
func ParsePlatform(s string) (Platform, error) {
	osName, arch, ok := strings.Cut(s, "/")
	if !ok || osName == "" || arch == "" || strings.Contains(arch, "/") {
		return Platform{}, fmt.Errorf("platform %q: want os/architecture such as linux/amd64", s)
	}
	return Platform{OS: osName, Architecture: arch}, nil
}

func (p Platform) String() string { return p.OS + "/" + p.Architecture }

// Build makes the image the definition describes from the entries (Entries
// of the same definition): one OCI layer holding every entry, owned and
// permissioned as COPY leaves them, dated at the epoch so that the same
// build outputs give the same digest, and a configuration with the stage's
// ENTRYPOINT, CMD, ENV, USER and WORKDIR.
func Build(def *Definition, entries []Entry, platform Platform) (v1.Image, error) {
	layerTar, err := tarOf(entries)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("action image layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: epoch}, CreatedBy: "actionimage: the Dockerfile's final stage",
	}})
	if err != nil {
		return nil, fmt.Errorf("action image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("action image config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: epoch}
	cfg.OS, cfg.Architecture = platform.OS, platform.Architecture
	cfg.Config.Entrypoint = def.Entrypoint
	cfg.Config.Cmd = def.Cmd
	cfg.Config.Env = def.Env
	cfg.Config.User = def.User
	cfg.Config.WorkingDir = def.WorkDir
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("action image config: %w", err)
	}
	return img, nil
}

// tarOf writes the entries, in order, as an uncompressed tar.
func tarOf(entries []Entry) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{
			Name: strings.TrimPrefix(e.Path, "/"), Mode: int64(e.Mode.Perm()), Uid: e.UID, Gid: e.GID,
			ModTime: epoch, Format: tar.FormatPAX,
		}
		if e.Mode&fs.ModeSetuid != 0 {
			hdr.Mode |= 0o4000
		}
		if e.Mode&fs.ModeSetgid != 0 {
			hdr.Mode |= 0o2000
		}
		if e.Mode&fs.ModeSticky != 0 {
			hdr.Mode |= 0o1000
		}
		switch {
		case e.Mode.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case e.Mode&fs.ModeSymlink != 0:
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.Link
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, e.Size
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeReg {
			data, err := os.ReadFile(e.local)
			if err != nil {
				return nil, err
			}
			if int64(len(data)) != e.Size {
				return nil, fmt.Errorf("%s changed while the image was built", e.local)
			}
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
