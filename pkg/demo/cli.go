package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
)

// RunCLI is the demo program (pkg/cmd/demo) once its flags are parsed: it
// plays Run with seed onto stdout and, when markdown names a file, writes the
// same summaries there as one Markdown page, saying so on stderr.
func RunCLI(ctx context.Context, stdout, stderr io.Writer, seed uint64, markdown string) error {
	var page bytes.Buffer
	if err := Run(ctx, io.MultiWriter(stdout, &page), seed); err != nil {
		return err
	}
	if markdown == "" {
		return nil
	}
	if err := os.WriteFile(markdown, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--markdown %s: %w", markdown, err)
	}
	fmt.Fprintf(stderr, "demo: wrote the job summaries to %s\n", markdown)
	return nil
}
