package jobwire

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits bound an archive (a payload or a result) before any of it is trusted.
type Limits struct {
	MaxCompressed int64 // bytes of the tar.gz itself
	MaxFile       int64 // bytes of one file, as read (not as the header claims)
	MaxTotal      int64 // bytes of all files together
	MaxEntries    int   // files and directories
}

// DefaultResultLimits bound a result archive: the transport cap of the seed
// (6 MB compressed) and generous but finite uncompressed sizes, so that a
// gzip bomb is stopped while it is read.
var DefaultResultLimits = Limits{MaxCompressed: 6 << 20, MaxFile: 64 << 20, MaxTotal: 256 << 20, MaxEntries: 10000}

// DefaultPayloadLimits bound a payload: compressed small enough that its
// base64 form and the job's JSON stay under the 10 MB /run limit.
var DefaultPayloadLimits = Limits{MaxCompressed: 7 << 20, MaxFile: 64 << 20, MaxTotal: 256 << 20, MaxEntries: 20000}

// ErrArchive is matched (errors.Is) by every *ArchiveError.
var ErrArchive = errors.New("archive rejected")

// ArchiveError says why an archive was rejected, naming the entry if one is at fault.
type ArchiveError struct {
	Entry  string // the offending name as the archive spells it ("" for the whole archive)
	Reason string
}

func (e *ArchiveError) Error() string {
	if e.Entry == "" {
		return "archive rejected: " + e.Reason
	}
	return fmt.Sprintf("archive rejected: entry %q: %s", e.Entry, e.Reason)
}

// Is makes errors.Is(err, ErrArchive) true.
func (e *ArchiveError) Is(target error) bool { return target == ErrArchive }

// Entry is one checked member of an archive.
type Entry struct {
	Name string // canonical slash path, without a trailing slash
	Dir  bool
	Size int64
	Exec bool // the owner execute bit was set (kept for files)
}

func reject(entry, format string, args ...any) *ArchiveError {
	return &ArchiveError{Entry: entry, Reason: fmt.Sprintf(format, args...)}
}

// CheckName returns the canonical form of an archive member name, or why it
// is refused: empty, absolute, with a backslash, NUL, a control character or
// invalid UTF-8, not in canonical form ("./a", "a//b"), or climbing out with "..".
func CheckName(name string) (string, error) {
	trimmed := strings.TrimSuffix(name, "/")
	switch {
	case trimmed == "" || trimmed == ".":
		return "", reject(name, "empty name")
	case !utf8.ValidString(name) || strings.ContainsRune(name, 0):
		return "", reject(name, "name is not valid UTF-8 text")
	case strings.ContainsFunc(name, unicode.IsControl):
		return "", reject(name, "name holds a control character (a terminal escape, a newline)")
	case strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':'):
		return "", reject(name, "absolute path")
	case strings.Contains(name, `\`):
		return "", reject(name, "backslash in name (ambiguous path separator)")
	}
	for _, part := range strings.Split(trimmed, "/") {
		if part == ".." {
			return "", reject(name, "path traversal (..)")
		}
	}
	if path.Clean(trimmed) != trimmed {
		return "", reject(name, "name is not canonical (want %q)", path.Clean(trimmed))
	}
	return trimmed, nil
}

// CheckArchive reads a whole tar.gz under lim and returns its entries, or the
// first reason to reject it. Only regular files and directories are allowed:
// links, devices and FIFOs are refused, as are duplicates (including a name
// that is both a file and a directory, or a file used as a directory).
func CheckArchive(data []byte, lim Limits) ([]Entry, error) {
	if int64(len(data)) > lim.MaxCompressed {
		return nil, reject("", "compressed size %d bytes exceeds the limit of %d bytes", len(data), lim.MaxCompressed)
	}
	var entries []Entry
	err := walkArchive(data, lim, func(e Entry, _ io.Reader) error {
		entries = append(entries, e)
		return nil
	})
	return entries, err
}

// walkArchive checks each member and hands it, with its content, to visit.
func walkArchive(data []byte, lim Limits, visit func(Entry, io.Reader) error) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return reject("", "not gzip data: %v", err)
	}
	tr := tar.NewReader(zr)
	kinds := map[string]bool{} // canonical name → is a directory
	var total int64
	count := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return reject("", "corrupt tar data: %v", err)
		}
		count++
		if count > lim.MaxEntries {
			return reject("", "more than %d entries", lim.MaxEntries)
		}
		name, err := CheckName(h.Name)
		if err != nil {
			return err
		}
		e, err := archiveEntry(h, name)
		if err != nil {
			return err
		}
		if err := checkPlace(kinds, h, name, e.Dir); err != nil {
			return err
		}
		kinds[name] = e.Dir
		if !e.Dir {
			buf, err := readContent(tr, h, lim, &total)
			if err != nil {
				return err
			}
			e.Size = int64(buf.Len())
			if err := visit(e, buf); err != nil {
				return err
			}
			continue
		}
		if err := visit(e, nil); err != nil {
			return err
		}
	}
	// Garbage after the gzip stream would be data nobody checked.
	if _, err := io.Copy(io.Discard, io.LimitReader(zr, 1)); err != nil {
		return reject("", "corrupt gzip data: %v", err)
	}
	return nil
}

// archiveEntry is the entry header h describes under its canonical name: a
// file or a directory; links and special files are refused.
func archiveEntry(h *tar.Header, name string) (Entry, error) {
	e := Entry{Name: name}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // old archivers write TypeRegA for files
		e.Exec = h.Mode&0o100 != 0
	case tar.TypeDir:
		e.Dir = true
	case tar.TypeSymlink, tar.TypeLink:
		return Entry{}, reject(h.Name, "link (to %q) is not allowed", h.Linkname)
	default:
		return Entry{}, reject(h.Name, "special file (type %q) is not allowed", string(h.Typeflag))
	}
	return e, nil
}

// checkPlace refuses an entry whose name was seen before, or that lies under
// a file; kinds maps each canonical name seen to whether it is a directory.
func checkPlace(kinds map[string]bool, h *tar.Header, name string, dir bool) error {
	if isDir, seen := kinds[name]; seen {
		if !(isDir && dir) {
			return reject(h.Name, "duplicate entry")
		}
		return reject(h.Name, "duplicate directory entry")
	}
	for parent := path.Dir(name); parent != "."; parent = path.Dir(parent) {
		if isDir, seen := kinds[parent]; seen && !isDir {
			return reject(h.Name, "lies under %q, which is a file", parent)
		}
	}
	return nil
}

// readContent reads a file entry's content within the per-file limit and,
// adding it to *total, the total one.
func readContent(tr io.Reader, h *tar.Header, lim Limits, total *int64) (*bytes.Buffer, error) {
	if h.Size > lim.MaxFile {
		return nil, reject(h.Name, "size %d bytes exceeds the per-file limit of %d bytes", h.Size, lim.MaxFile)
	}
	// The header's size is not trusted: the read is bounded by the limits.
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(tr, lim.MaxFile+1))
	if err != nil {
		return nil, reject(h.Name, "reading content: %v", err)
	}
	if n > lim.MaxFile {
		return nil, reject(h.Name, "content exceeds the per-file limit of %d bytes", lim.MaxFile)
	}
	*total += n
	if *total > lim.MaxTotal {
		return nil, reject(h.Name, "total content exceeds the limit of %d bytes", lim.MaxTotal)
	}
	return &buf, nil
}

// Extract checks the whole archive first and only then writes it under dest,
// which must not exist yet (or be an empty directory). Files are created
// exclusively through an os.Root, so nothing can be written outside dest.
func Extract(data []byte, dest string, lim Limits) ([]Entry, error) {
	entries, err := CheckArchive(data, lim)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	if left, err := os.ReadDir(dest); err != nil {
		return nil, err
	} else if len(left) > 0 {
		return nil, fmt.Errorf("extract into %s: the directory is not empty", dest)
	}
	root, err := os.OpenRoot(dest)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	err = walkArchive(data, lim, func(e Entry, content io.Reader) error {
		if e.Dir {
			return root.MkdirAll(e.Name, 0o755)
		}
		if dir := path.Dir(e.Name); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		mode := fs.FileMode(0o644)
		if e.Exec {
			mode = 0o755
		}
		f, err := root.OpenFile(e.Name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, content); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	return entries, err
}
