package actionimage

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// PullBudget bounds a verify --image run: every manifest, config and layer.
const PullBudget = 5 * time.Minute

// Usage is the action-image command's help.
const Usage = `usage:
  action-image build  --dockerfile Dockerfile --stage build=DIR --platform linux/amd64 --layout OUT
  action-image verify --dockerfile Dockerfile {--layout DIR, --image REF} [--max-bytes N] [--doc PAGE --row ROW]
  action-image measure --image REF --doc PAGE --row ROW [--last-layer]

build lays out the Dockerfile's final stage from the build outputs under DIR (the stage's /
there) and writes it as an OCI image layout; verify checks every image of a layout, or every
platform of a pushed image (credentials from the Docker configuration, as docker login writes
it), against the same final stage, and prints each one's size; measure reads a pushed image's
linux/amd64 manifest (compressed sizes; --last-layer also the last layer's). With --doc and
--row, the linux/amd64 size is written into that row of the sizes page.`

// UsageError is a bad command line: it names the flag, the value and what is expected.
type UsageError struct{ Flag, Value, Expected string }

func (e *UsageError) Error() string {
	return fmt.Sprintf("action-image: %s %q: want %s\n%s", e.Flag, e.Value, e.Expected, Usage)
}

// cliFlags are the action-image command's flags.
type cliFlags struct {
	dockerfile, layoutDir, ref, platform, doc, row string
	maxBytes                                       int64
	lastLayer                                      bool
	roots                                          StageRoots
}

// parseFlags reads the flags after the command name.
func parseFlags(command string, args []string) (*cliFlags, error) {
	f := &cliFlags{roots: StageRoots{}}
	fl := flag.NewFlagSet("action-image "+command, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&f.dockerfile, "dockerfile", "Dockerfile", "")
	fl.StringVar(&f.layoutDir, "layout", "", "")
	fl.StringVar(&f.ref, "image", "", "")
	fl.StringVar(&f.platform, "platform", "linux/amd64", "")
	fl.Int64Var(&f.maxBytes, "max-bytes", MaxBytes, "")
	fl.StringVar(&f.doc, "doc", "", "")
	fl.StringVar(&f.row, "row", "", "")
	fl.BoolVar(&f.lastLayer, "last-layer", false, "")
	fl.Func("stage", "", func(v string) error {
		stage, dir, ok := strings.Cut(v, "=")
		if !ok || stage == "" || dir == "" {
			return errors.New("want <stage>=<directory>")
		}
		f.roots[stage] = dir
		return nil
	})
	if err := fl.Parse(args); err != nil {
		return nil, &UsageError{Flag: command, Value: strings.Join(args, " "), Expected: err.Error()}
	}
	if fl.NArg() > 0 {
		return nil, &UsageError{Flag: command, Value: strings.Join(fl.Args(), " "), Expected: "flags only"}
	}
	if (f.doc == "") != (f.row == "") {
		return nil, &UsageError{Flag: "--doc/--row", Value: f.doc + f.row, Expected: "both, or neither"}
	}
	return f, nil
}

// RunCLI runs the action-image command.
func RunCLI(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return &UsageError{Flag: "command", Value: "", Expected: "build, verify or measure"}
	}
	f, err := parseFlags(args[0], args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "measure":
		return runMeasure(ctx, f, stdout)
	case "build", "verify":
		text, err := os.ReadFile(f.dockerfile)
		if err != nil {
			return fmt.Errorf("action-image: --dockerfile: %w", err)
		}
		def, err := ParseDockerfile(string(text))
		if err != nil {
			return err
		}
		if args[0] == "build" {
			return runBuild(def, f, stdout)
		}
		return runVerify(ctx, def, f, stdout)
	}
	return &UsageError{Flag: "command", Value: args[0], Expected: "build, verify or measure"}
}

// runMeasure measures a pushed image and records it in the sizes page.
func runMeasure(ctx context.Context, f *cliFlags, stdout io.Writer) error {
	if f.ref == "" || f.doc == "" {
		return &UsageError{Flag: "--image/--doc", Value: f.ref, Expected: "a pushed image and the sizes page with its row"}
	}
	pctx, cancel := context.WithTimeout(ctx, PullBudget)
	defer cancel()
	s, err := measurePushed(pctx, f.ref, f.lastLayer)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s compressed (%s)\n", f.ref, formatBytes(s.CompressedBytes), s.Detail)
	return recordTo(f.doc, f.row, s)
}

// runBuild builds the image from the stages' outputs and writes the layout.
func runBuild(def *Definition, f *cliFlags, stdout io.Writer) error {
	plat, err := ParsePlatform(f.platform)
	if err != nil {
		return &UsageError{Flag: "--platform", Value: f.platform, Expected: "os/architecture such as linux/amd64"}
	}
	if f.layoutDir == "" || len(f.roots) == 0 {
		return &UsageError{Flag: "--layout/--stage", Value: f.layoutDir, Expected: "an output directory and at least one --stage <name>=<directory>"}
	}
	img, m, err := BuildChecked(def, f.roots.Locate, plat, f.maxBytes)
	if err != nil {
		return err
	}
	digest, err := WriteLayout(f.layoutDir, img, plat)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s: %s\n", f.layoutDir, plat, describeMeasure(digest, m))
	return nil
}

// runVerify checks every image of a layout or a pushed reference, and
// records the pushed linux/amd64 image's size when asked.
func runVerify(ctx context.Context, def *Definition, f *cliFlags, stdout io.Writer) error {
	var imgs []platformImage
	var err error
	switch {
	case (f.layoutDir == "") == (f.ref == ""):
		return &UsageError{Flag: "--layout/--image", Value: f.layoutDir + f.ref, Expected: "exactly one of --layout DIR and --image REF"}
	case f.layoutDir != "":
		imgs, err = layoutImages(f.layoutDir)
	default:
		pctx, cancel := context.WithTimeout(ctx, PullBudget)
		defer cancel()
		imgs, err = remoteImages(pctx, f.ref)
	}
	if err != nil {
		return err
	}
	var errs []error
	var recorded *Sized
	for _, pi := range imgs {
		m, err := Verify(pi.img, def, nil, f.maxBytes)
		digest, _ := pi.img.Digest()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", pi.platform, err))
			continue
		}
		fmt.Fprintf(stdout, "%s: %s\n", pi.platform, describeMeasure(digest, m))
		if pi.platform == "linux/amd64" {
			recorded = &Sized{Reference: f.ref, CompressedBytes: m.CompressedBytes,
				Detail: fmt.Sprintf("linux/amd64; %s unpacked, %d files", formatBytes(m.UnpackedBytes), m.Files)}
		}
	}
	if err := errors.Join(errs...); err != nil || f.doc == "" {
		return err
	}
	if recorded == nil || f.ref == "" {
		return &UsageError{Flag: "--doc", Value: f.doc, Expected: "a pushed image (--image) with a linux/amd64 platform to record"}
	}
	return recordTo(f.doc, f.row, *recorded)
}

// BuildChecked lays out and builds the image, then verifies it against the
// definition and the entries it was built from.
func BuildChecked(def *Definition, locate Locate, plat Platform, maxBytes int64) (v1.Image, Measure, error) {
	entries, err := Entries(def, locate)
	if err != nil {
		return nil, Measure{}, err
	}
	img, err := Build(def, entries, plat)
	if err != nil {
		return nil, Measure{}, err
	}
	m, err := Verify(img, def, entries, maxBytes)
	return img, m, err
}

func describeMeasure(digest v1.Hash, m Measure) string {
	return fmt.Sprintf("%s, %d files, %d bytes of content, %d bytes unpacked, %d bytes compressed", digest, m.Files, m.ContentBytes, m.UnpackedBytes, m.CompressedBytes)
}

// WriteLayout writes the image as an OCI image layout in dir (created, or
// appended to) and returns its digest.
func WriteLayout(dir string, img v1.Image, plat Platform) (v1.Hash, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return v1.Hash{}, fmt.Errorf("OCI layout %s: %w", dir, err)
		}
	}
	if err := p.AppendImage(img, layout.WithPlatform(v1.Platform{OS: plat.OS, Architecture: plat.Architecture})); err != nil {
		return v1.Hash{}, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return img.Digest()
}

type platformImage struct {
	platform string
	img      v1.Image
}

// layoutImages is every image of an OCI layout's index.
func layoutImages(dir string) ([]platformImage, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	return indexImages(idx, dir)
}

func indexImages(idx v1.ImageIndex, where string) ([]platformImage, error) {
	mf, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	var out []platformImage
	for _, d := range mf.Manifests {
		if !d.MediaType.IsImage() {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, d.Digest, err)
		}
		plat := "unknown platform"
		if d.Platform != nil {
			plat = d.Platform.OS + "/" + d.Platform.Architecture
		}
		if plat == "unknown/unknown" {
			continue // an attestation manifest, not an image to run
		}
		out = append(out, platformImage{platform: plat, img: img})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no image in the index", where)
	}
	return out, nil
}

// remoteImages pulls ref: every platform of an index, or the one image.
func remoteImages(ctx context.Context, ref string) ([]platformImage, error) {
	r, err := name.ParseReference(ref, name.StrictValidation)
	if err != nil {
		return nil, &UsageError{Flag: "--image", Value: ref, Expected: "a full reference such as ghcr.io/owner/name@sha256:<64 hex>"}
	}
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	desc, err := remote.Get(r, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		return indexImages(idx, ref)
	}
	img, err := desc.Image()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	return []platformImage{{platform: cfg.OS + "/" + cfg.Architecture, img: img}}, nil
}
