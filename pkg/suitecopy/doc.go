// Package suitecopy turns a checkout of the suite into a copy kept under
// another GitHub owner: it rewrites exactly the suite's own references,
// OWNER/runpod-gpu in all its forms (the Go module path and its imports,
// ghcr.io/OWNER/runpod-gpu, uses: OWNER/runpod-gpu/…, URLs), and nothing
// that only ends in them, such as my-org/runpod-gpu. runpod-gpu copy-suite
// runs it; the published suite (org/runpod-gpu) needs none of it.
package suitecopy
