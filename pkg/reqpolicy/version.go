package reqpolicy

// Product names the suite in the User-Agent of every request.
const Product = "runpod-gpu"

// Version is the suite's version; release builds set it with
// -ldflags "-X github.com/org/runpod-gpu/pkg/reqpolicy.Version=v1.2.3".
var Version = "dev"

// UserAgent returns "runpod-gpu/<Version>". It is a function rather than a
// constant so that a linker-set Version is always the one reported.
func UserAgent() string { return Product + "/" + Version }
