// Package version names the suite and its release version, which every
// outside request reports in its User-Agent. Release builds set Version with
// the linker, so it lives in a package with no dependencies.
package version

// Product names the suite in the User-Agent of every request.
const Product = "runpod-gpu"

// Version is the suite's version; release builds set it with
// -ldflags "-X github.com/org/runpod-gpu/pkg/version.Version=v1.2.3".
var Version = "dev"

// UserAgent returns "runpod-gpu/<Version>". It is a function rather than a
// constant so that a linker-set Version is always the one reported.
func UserAgent() string { return Product + "/" + Version }
