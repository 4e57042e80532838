// Package lanegen writes the lane's YAML that repeats gpu-lane.yml, so that its
// jobs and settings are written by hand once: gpu-lane.yml's host-fault re-run
// jobs (provision-again, watchdog-again, gpu-tests-again) and the four own-job
// parts (gpu-lane-authorize.yml, gpu-lane-provision.yml,
// gpu-lane-watchdog.yml, gpu-lane-finish.yml): their headers from the
// templates in parts/, which copy gpu-lane.yml's settings by name, and their
// jobs from gpu-lane.yml's. `go generate ./...` runs it
// (pkg/cmd/lanegen); its output is committed, and a test fails when the
// committed files are not what it writes.
package lanegen

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Lane is the one source: the reusable lane, whose first jobs are written by
// hand and whose re-run jobs lanegen writes between its markers.
const Lane = "gpu-lane.yml"

// Generate returns the generated files' text by name (Lane and the four
// parts) from the workflows' current text by name, of which it reads Lane:
// its first jobs and its settings, and the re-run jobs it writes anew.
func Generate(files map[string]string) (map[string]string, error) {
	lane, ok := files[Lane]
	if !ok {
		return nil, fmt.Errorf("no %s to generate from", Lane)
	}
	src, err := parseLane(lane)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Lane, err)
	}
	out := map[string]string{}
	if out[Lane], err = src.withReruns(); err != nil {
		return nil, fmt.Errorf("%s: %w", Lane, err)
	}
	for _, p := range parts {
		if out[p.file], err = p.generate(src); err != nil {
			return nil, fmt.Errorf("%s: %w", p.file, err)
		}
	}
	return out, nil
}

// Files are the names of the files Generate reads and writes.
func Files() []string {
	names := []string{Lane}
	for _, p := range parts {
		names = append(names, p.file)
	}
	return names
}

// ReadDir reads Files from dir, the repository's .github/workflows; a
// missing part reads as empty (WriteDir writes it).
func ReadDir(dir string) (map[string]string, error) {
	files := map[string]string{}
	for _, name := range Files() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !(errors.Is(err, fs.ErrNotExist) && name != Lane) {
			return nil, err
		}
		files[name] = string(b)
	}
	return files, nil
}

// WriteDir regenerates Files in dir, writing only those that change; once
// ctx is done it writes no further file.
func WriteDir(ctx context.Context, dir string) error {
	files, err := ReadDir(dir)
	if err != nil {
		return err
	}
	out, err := Generate(files)
	if err != nil {
		return err
	}
	for _, name := range Files() {
		if out[name] == files[name] {
			continue
		}
		if err := ctx.Err(); err != nil { // interrupted: no further file is written
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(out[name]), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// lines splits text into its lines, without the final newline's empty one.
func lines(text string) []string {
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// joinLines joins lines into a text ending in one newline.
func joinLines(ls []string) string { return strings.Join(ls, "\n") + "\n" }
