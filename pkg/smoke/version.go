package smoke

import "github.com/org/runpod-gpu/pkg/cudaver"

// Version is a CUDA release, major.minor: "12.8" as configurations write it and 12080
// (1000*major + 10*minor) as cuDriverGetVersion reports it. The grammar is pkg/cudaver's,
// the one the configuration and the startup script use, so the proof never refuses a
// version they let through.
type Version = cudaver.Version
