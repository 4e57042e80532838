package actionimage

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// MaxBytes is the most the action image may weigh unpacked (every layer's
// uncompressed tar): every step of the lane pulls it.
const MaxBytes = 20_000_000

// Measure is an image's size, as a pull and a host's disk see it.
type Measure struct {
	ContentBytes    int64 // the regular files' bytes
	UnpackedBytes   int64 // every layer's uncompressed tar
	CompressedBytes int64 // the manifest, the config and the compressed layers: what a pull downloads
	Files           int   // regular files
}

// MismatchError lists every way an image differs from its definition.
type MismatchError struct {
	Problems []string
}

func (e *MismatchError) Error() string {
	return "the image does not match the Dockerfile's final stage:\n  " + strings.Join(e.Problems, "\n  ")
}

// Verify checks an image against the definition: the configuration's
// entrypoint, command, environment, user and working directory are the
// stage's; it unpacks to at most limit bytes; and its files are exactly want
// (path, type, permissions, owner, size and SHA-256), or, when want is nil
// (an image pulled from a registry, without the build outputs at hand), each
// file lies under a COPY destination and each file a COPY names is there.
// The error is a *MismatchError listing every difference.
func Verify(img v1.Image, def *Definition, want []Entry, limit int64) (Measure, error) {
	var m Measure
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	cfg, err := img.ConfigFile()
	if err != nil {
		return m, fmt.Errorf("image config: %w", err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, def.Entrypoint) {
		add("entrypoint %q: the Dockerfile says %q", cfg.Config.Entrypoint, def.Entrypoint)
	}
	if !slices.Equal(cfg.Config.Cmd, def.Cmd) {
		add("cmd %q: the Dockerfile says %q", cfg.Config.Cmd, def.Cmd)
	}
	for _, kv := range def.Env {
		if !slices.Contains(cfg.Config.Env, kv) {
			add("environment has no %s, which the Dockerfile sets", kv)
		}
	}
	if cfg.Config.User != def.User {
		add("user %q: the Dockerfile says %q", cfg.Config.User, userOrRoot(def.User))
	}
	if cfg.Config.WorkingDir != def.WorkDir {
		add("working directory %q: the Dockerfile says %q", cfg.Config.WorkingDir, def.WorkDir)
	}

	got, err := imageEntries(img, &m)
	if err != nil {
		return m, err
	}
	if m.CompressedBytes, err = compressedSize(img); err != nil {
		return m, err
	}
	if m.UnpackedBytes > limit {
		add("%d bytes unpacked: want at most %d", m.UnpackedBytes, limit)
	}
	if want != nil {
		problems = append(problems, compareEntries(got, want)...)
	} else {
		problems = append(problems, compareShape(got, def)...)
	}
	if len(problems) > 0 {
		return m, &MismatchError{Problems: problems}
	}
	return m, nil
}

func userOrRoot(u string) string {
	if u == "" {
		return "root (no USER)"
	}
	return u
}

// imageEntries reads every layer in order (later entries replace earlier
// ones) and counts the sizes into m.
func imageEntries(img v1.Image, m *Measure) (map[string]Entry, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("image layers: %w", err)
	}
	out := map[string]Entry{}
	for i, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		counted := &countingReader{r: rc}
		err = readTar(counted, out)
		_, _ = io.Copy(io.Discard, counted) // the tar's end padding counts too
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		m.UnpackedBytes += counted.n
	}
	for _, e := range out {
		if e.Mode.IsRegular() {
			m.ContentBytes += e.Size
			m.Files++
		}
	}
	return out, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readTar adds a layer's entries to out.
func readTar(r io.Reader, out map[string]Entry) error {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		p := path.Clean("/" + hdr.Name)
		if strings.HasPrefix(path.Base(p), ".wh.") {
			return fmt.Errorf("%s: a whiteout; the action image is one layer of copies", p)
		}
		e := Entry{Path: p, UID: hdr.Uid, GID: hdr.Gid, Mode: fs.FileMode(hdr.Mode) & fs.ModePerm}
		if hdr.Mode&0o4000 != 0 {
			e.Mode |= fs.ModeSetuid
		}
		if hdr.Mode&0o2000 != 0 {
			e.Mode |= fs.ModeSetgid
		}
		if hdr.Mode&0o1000 != 0 {
			e.Mode |= fs.ModeSticky
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			e.Mode |= fs.ModeDir
		case tar.TypeSymlink:
			e.Mode, e.Link = fs.ModeSymlink|0o777, hdr.Linkname
		case tar.TypeReg:
			h := sha256.New()
			n, err := io.Copy(h, tr)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			e.Size, e.SHA256 = n, hex.EncodeToString(h.Sum(nil))
		default:
			return fmt.Errorf("%s: tar entry type %q; COPY makes files, directories and links only", p, hdr.Typeflag)
		}
		out[p] = e
	}
}

// compressedSize is what a pull downloads: the manifest, the config and every compressed layer.
func compressedSize(img v1.Image) (int64, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return 0, fmt.Errorf("image manifest: %w", err)
	}
	mf, err := img.Manifest()
	if err != nil {
		return 0, fmt.Errorf("image manifest: %w", err)
	}
	total := int64(len(raw)) + mf.Config.Size
	for _, l := range mf.Layers {
		total += l.Size
	}
	return total, nil
}

// describe is an entry as a message shows it.
func describe(e Entry) string {
	switch {
	case e.Mode.IsDir():
		return fmt.Sprintf("directory %v %d:%d", e.Mode, e.UID, e.GID)
	case e.Mode&fs.ModeSymlink != 0:
		return "link to " + e.Link
	}
	return fmt.Sprintf("file %v %d:%d %d bytes sha256:%.12s", e.Mode, e.UID, e.GID, e.Size, e.SHA256)
}

// compareEntries lists every entry that is missing, extra or different.
func compareEntries(got map[string]Entry, want []Entry) []string {
	var problems []string
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Path] = true
		g, ok := got[w.Path]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s is missing: the Dockerfile copies it (%s)", w.Path, describe(w)))
		case describe(g) != describe(w) || g.SHA256 != w.SHA256:
			problems = append(problems, fmt.Sprintf("%s is %s: the Dockerfile's copy is %s", w.Path, describe(g), describe(w)))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if !wanted[p] {
			problems = append(problems, fmt.Sprintf("%s (%s) is not copied by the Dockerfile's final stage", p, describe(got[p])))
		}
	}
	return problems
}

// compareShape checks an image without the build outputs: every file lies
// under a COPY destination, and every file a COPY names by its own name is there.
func compareShape(got map[string]Entry, def *Definition) []string {
	var problems []string
	var dirs []string
	named := map[string]bool{}
	for _, c := range def.Copies {
		for _, src := range c.Sources {
			switch {
			case strings.HasSuffix(src, "/"):
				dirs = append(dirs, c.Dest)
			case strings.HasSuffix(c.Dest, "/"):
				named[path.Join(c.Dest, path.Base(src))] = true
			default:
				named[path.Clean(c.Dest)] = true
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(named)) {
		if e, ok := got[p]; !ok || e.Mode.IsDir() {
			problems = append(problems, fmt.Sprintf("%s is missing: the Dockerfile copies it", p))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if got[p].Mode.IsDir() || named[p] {
			continue
		}
		under := false
		for _, d := range dirs {
			under = under || d == "/" || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/")
		}
		if !under {
			problems = append(problems, fmt.Sprintf("%s (%s) is not copied by the Dockerfile's final stage", p, describe(got[p])))
		}
	}
	return problems
}
