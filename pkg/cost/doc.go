// Package cost estimates what a RunPod GPU pod cost a CI run: the paid window
// from the provider's start to confirmed deletion, the hourly price captured
// while the pod ran, the window broken into stages of the GPU job, and the
// rejected candidates paid for on the way.
//
// The numbers are estimates, not invoices: RunPod's bill is authoritative.
// Anything the evidence does not show stays explicitly unknown — a missing
// start is never replaced by createdAt and a price of 0 is never "free".
//
// The package takes plain values, not provider records (package runpod decodes
// those), so that it stays low in the dependency graph. It also defines the one
// format of the structured log lines (Line) and of the cost artifact
// (Artifact) that the actions write and the history tool reads, and the
// report both cleanup and the watchdog build from their evidence (Evidence,
// BuildReport, Snapshot, ParsePricePerHour): two jobs side by side, neither
// importing the other.
package cost
