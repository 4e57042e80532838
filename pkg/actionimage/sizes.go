package actionimage

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/org/runpod-gpu/pkg/mdtable"
)

// NotYetMeasured is what the sizes page says for an image until a release
// has measured it: the docs state no estimate.
const NotYetMeasured = "not yet measured"

// SizesPage is the page the release's measurement steps write, in its
// release commit; the docs link to it for every image's size.
const SizesPage = ".github/docs/image-sizes.md"

// Rows of the sizes page, one per image the release pushes.
const (
	RowActionImage = "action image"
	RowPodImage    = "default pod image"
	RowCUDAImage   = "CUDA runner image"
)

// Rows are the sizes page's rows, in order.
var Rows = []string{RowActionImage, RowPodImage, RowCUDAImage}

// Sized is one image's measurement as the sizes page shows it.
type Sized struct {
	Reference       string // name@sha256:…
	CompressedBytes int64  // what a pull downloads (linux/amd64)
	Detail          string // more of the measurement, such as the unpacked size
}

// RecordSize rewrites the sizes page's row for one image (the table row
// whose first cell is row) with its measurement; the table is written again
// through mdtable, the other rows as they were. A page without that row is
// an error.
func RecordSize(page, row string, s Sized) (string, error) {
	lines := strings.Split(page, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| ") })
	if start < 0 {
		return "", fmt.Errorf("the sizes page has no table")
	}
	end := start
	for end < len(lines) && strings.HasPrefix(lines[end], "|") {
		end++
	}
	return recordRows(lines[:start], lines[start:end], lines[end:], row, s)
}

// recordRows writes the table (header, separator, rows) between before and after.
func recordRows(before, table, after []string, row string, s Sized) (string, error) {
	if len(table) < 3 {
		return "", fmt.Errorf("the sizes page's table has no rows")
	}
	cells := func(line string) []string {
		return strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
	}
	t := mdtable.New(cells(table[0])...)
	found := false
	for _, line := range table[2:] {
		c := cells(line)
		if c[0] == mdtable.Cell(row) {
			c = []string{mdtable.Cell(row), mdtable.Code(s.Reference), mdtable.Cell(formatBytes(s.CompressedBytes)), mdtable.Cell(s.Detail)}
			found = true
		}
		t.Row(c...)
	}
	if !found {
		return "", fmt.Errorf("the sizes page has no row %q: want one of %q", row, Rows)
	}
	out := slices.Concat(before, strings.Split(strings.TrimSuffix(t.String(), "\n"), "\n"), after)
	return strings.Join(out, "\n"), nil
}

// formatBytes is "8,356,842 bytes (8.36 MB)".
func formatBytes(n int64) string {
	digits := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return fmt.Sprintf("%s bytes (%.2f MB)", b.String(), float64(n)/1e6)
}

// recordTo writes a measurement into the page at path.
func recordTo(path, row string, s Sized) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--doc: %w", err)
	}
	out, err := RecordSize(string(page), row, s)
	if err != nil {
		return fmt.Errorf("--row: %w", err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// measurePushed measures a pushed image's linux/amd64 manifest without its
// layers' content: the compressed sizes the manifest names, and with
// lastLayer the last layer's (what the Dockerfile stage added on its base).
func measurePushed(ctx context.Context, ref string, lastLayer bool) (Sized, error) {
	imgs, err := remoteImages(ctx, ref)
	if err != nil {
		return Sized{}, err
	}
	var img v1.Image
	for _, pi := range imgs {
		if pi.platform == "linux/amd64" {
			img = pi.img
		}
	}
	if img == nil {
		return Sized{}, fmt.Errorf("%s: no linux/amd64 image, the platform of RunPod's pods", ref)
	}
	total, err := compressedSize(img)
	if err != nil {
		return Sized{}, err
	}
	s := Sized{Reference: ref, CompressedBytes: total, Detail: "linux/amd64"}
	if lastLayer {
		mf, err := img.Manifest()
		if err != nil {
			return Sized{}, err
		}
		if len(mf.Layers) == 0 {
			return Sized{}, fmt.Errorf("%s: no layers", ref)
		}
		s.Detail = fmt.Sprintf("linux/amd64; its last layer, what the suite adds: %s", formatBytes(mf.Layers[len(mf.Layers)-1].Size))
	}
	return s, nil
}
