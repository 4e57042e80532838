package demo

// The README's picture is bound to the demo: -update writes, beside the PNG,
// the Markdown it was taken from (testdata/pr-summary.md) and stamps the PNG
// with that Markdown's SHA-256 in a tEXt chunk. Without -update the test
// holds the PNG to that Markdown and the Markdown to a run of the demo, so a
// picture whose figures the demo no longer reports fails.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// pictureSourceFile is the Markdown the README's picture was taken from.
const pictureSourceFile = "testdata/pr-summary.md"

// pictureStampKey is the tEXt keyword of the picture's source SHA-256.
const pictureStampKey = "runpod-gpu-source-sha256"

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// sourceStamp is the stamp for a picture taken from markdown.
func sourceStamp(markdown []byte) string {
	sum := sha256.Sum256(markdown)
	return hex.EncodeToString(sum[:])
}

// pngChunk is one chunk of a PNG file: at is where it starts, end where the
// next one does.
type pngChunk struct {
	kind    string
	data    []byte
	at, end int
}

// pngChunks splits a PNG file into its chunks, checking each one's length.
func pngChunks(file []byte) ([]pngChunk, error) {
	if !bytes.HasPrefix(file, pngSignature) {
		return nil, errors.New("not a PNG file")
	}
	var chunks []pngChunk
	for at := len(pngSignature); at < len(file); {
		if len(file)-at < 12 {
			return nil, fmt.Errorf("a truncated chunk at byte %d", at)
		}
		n := int(binary.BigEndian.Uint32(file[at:]))
		if n > len(file)-at-12 {
			return nil, fmt.Errorf("a chunk at byte %d runs past the end", at)
		}
		chunks = append(chunks, pngChunk{kind: string(file[at+4 : at+8]), data: file[at+8 : at+8+n], at: at, end: at + 12 + n})
		at += 12 + n
	}
	return chunks, nil
}

// pngText is the value of the tEXt chunk key, and whether there is one.
func pngText(file []byte, key string) (string, bool, error) {
	chunks, err := pngChunks(file)
	if err != nil {
		return "", false, err
	}
	for _, c := range chunks {
		if k, v, ok := bytes.Cut(c.data, []byte{0}); c.kind == "tEXt" && ok && string(k) == key {
			return string(v), true, nil
		}
	}
	return "", false, nil
}

// pngWithText returns file with one tEXt chunk key=value right after its
// header chunk, replacing any earlier one of that key.
func pngWithText(file []byte, key, value string) ([]byte, error) {
	chunks, err := pngChunks(file)
	if err != nil {
		return nil, err
	}
	if len(chunks) == 0 || chunks[0].kind != "IHDR" {
		return nil, errors.New("a PNG file without its IHDR chunk first")
	}
	body := append(append([]byte("tEXt"), key+"\x00"...), value...)
	text := binary.BigEndian.AppendUint32(nil, uint32(len(body)-4))
	text = append(text, body...)
	text = binary.BigEndian.AppendUint32(text, crc32.ChecksumIEEE(body))
	out := append([]byte{}, file[:chunks[0].end]...)
	out = append(out, text...)
	for _, c := range chunks[1:] {
		if k, _, ok := bytes.Cut(c.data, []byte{0}); c.kind == "tEXt" && ok && string(k) == key {
			continue
		}
		out = append(out, file[c.at:c.end]...)
	}
	return out, nil
}

// markdownLinkTargetRE is a Markdown link's target, which the picture does
// not show.
var markdownLinkTargetRE = regexp.MustCompile(`\]\([^)\s]*\)`)

// pictureShows is what a rendering of markdown shows: its text, without
// link targets (the gate's check-run URL moves with every API call the demo
// adds, and no reader sees it).
func pictureShows(markdown string) string {
	return markdownLinkTargetRE.ReplaceAllString(markdown, "]()")
}

// pictureRetake is how to retake the README's picture.
const pictureRetake = "retake it: go test ./pkg/demo -run TestReadmePicture -update (needs chromium, as .ci/run installs it)"

// pictureProblems holds a picture to its source (the Markdown it was taken
// from) and the source to page, the demo's section the README shows.
func pictureProblems(picture, source []byte, page string) []string {
	var problems []string
	stamp, ok, err := pngText(picture, pictureStampKey)
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("%s: %v", pictureFile, err))
	case !ok || stamp != sourceStamp(source):
		problems = append(problems, fmt.Sprintf("%s was not taken from %s (stamp %q, want %q)", pictureFile, pictureSourceFile, stamp, sourceStamp(source)))
	}
	if shown, now := pictureShows(string(source)), pictureShows(page); shown != now {
		problems = append(problems, fmt.Sprintf("the demo no longer reports what the README's picture shows (%s):\n%s",
			pictureSourceFile, cmp.Diff(shown, now)))
	}
	return problems
}

// TestReadmePictureIsTheDemos: the picture the README shows was taken from
// the Markdown of a run of today's demo (seed 1).
func TestReadmePictureIsTheDemos(t *testing.T) {
	picture, err := os.ReadFile(pictureFile)
	assert.NilError(t, err)
	source, err := os.ReadFile(pictureSourceFile)
	assert.NilError(t, err, pictureRetake)
	problems := pictureProblems(picture, source, pictureMarkdown(t, play(t, 1)))
	assert.Check(t, len(problems) == 0, "%s; %s", strings.Join(problems, "\n"), pictureRetake)
}

func TestPNGText(t *testing.T) {
	var plain bytes.Buffer
	assert.NilError(t, png.Encode(&plain, image.NewGray(image.Rect(0, 0, 3, 2))))
	_, ok, err := pngText(plain.Bytes(), pictureStampKey)
	assert.NilError(t, err)
	assert.Check(t, !ok, "a PNG without the stamp")

	stamped, err := pngWithText(plain.Bytes(), pictureStampKey, "one")
	assert.NilError(t, err)
	stamped, err = pngWithText(stamped, pictureStampKey, "two")
	assert.NilError(t, err)
	value, ok, err := pngText(stamped, pictureStampKey)
	assert.NilError(t, err)
	assert.Check(t, ok && value == "two", "the later stamp replaces the earlier: %q", value)
	assert.Check(t, is.Equal(len(stamped), plain.Len()+12+len(pictureStampKey)+1+len("two")), "one stamp chunk")
	img, err := png.Decode(bytes.NewReader(stamped))
	assert.NilError(t, err, "a stamped PNG still decodes (its CRCs are right)")
	assert.Check(t, is.Equal(img.Bounds().Dx(), 3))

	for name, bad := range map[string][]byte{
		"not a PNG": []byte("GIF89a"),
		"truncated": plain.Bytes()[:len(plain.Bytes())-5],
	} {
		_, _, err := pngText(bad, pictureStampKey)
		assert.Check(t, err != nil, name)
	}
}

// The check fails for a picture taken from other figures, and for one whose
// source the demo no longer reports.
func TestPictureProblems(t *testing.T) {
	source := []byte("# What a pull request gets\nPublished as [CI GPU gate](https://github.com/o/r/runs/33)\n| 1 | live-1 | 25 |\n")
	var plain bytes.Buffer
	assert.NilError(t, png.Encode(&plain, image.NewGray(image.Rect(0, 0, 3, 2))))
	stamped, err := pngWithText(plain.Bytes(), pictureStampKey, sourceStamp(source))
	assert.NilError(t, err)
	other, err := pngWithText(plain.Bytes(), pictureStampKey, sourceStamp([]byte("other figures")))
	assert.NilError(t, err)
	tests := []struct {
		name    string
		picture []byte
		page    string
		want    []string
	}{
		{name: "taken from the source, which the demo reports", picture: stamped, page: string(source)},
		{name: "no stamp", picture: plain.Bytes(), page: string(source), want: []string{"was not taken from testdata/pr-summary.md (stamp \"\""}},
		{name: "taken from other figures", picture: other, page: string(source), want: []string{"was not taken from testdata/pr-summary.md (stamp \"" + sourceStamp([]byte("other figures"))}},
		{name: "not a PNG", picture: []byte("GIF89a"), page: string(source), want: []string{"not a PNG file"}},
		{name: "a link moved", picture: stamped, page: strings.Replace(string(source), "(https://github.com/o/r/runs/33)", "(https://github.com/o/r/runs/35)", 1)},
		{name: "the demo moved on", picture: stamped, page: strings.Replace(string(source), "| 25 |", "| 35 |", 1),
			want: []string{"the demo no longer reports what the README's picture shows"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := pictureProblems(tc.picture, source, tc.page)
			assert.Assert(t, is.Len(got, len(tc.want)), "%q", got)
			for i, want := range tc.want {
				assert.Check(t, is.Contains(got[i], want))
			}
		})
	}
}
