// Package history is the cross-run cost history: it collects every attempt of
// the GPU workflow in a date range from GitHub — run metadata, logs and only the
// small cost artifacts — into an evidence directory outside the repository,
// and summarizes that saved evidence, offline, into a JSON and a Markdown
// report.
//
// The evidence is read through the formats the other actions write and that
// are defined once elsewhere: the structured log lines and the cost artifact of
// pkg/cost, and the gate marker (external_id) of pkg/gatecheck. A pod's cost comes
// from the best evidence there is — the cost artifact, else a cost or attempt
// log line, else an estimate from the log's timestamps — and anything the
// evidence does not show is reported as unknown, never as zero.
//
// Collection is incremental: each attempt's downloads are recorded with their
// state, only completed downloads are final, and whatever failed (or belonged
// to a run still in progress) is tried again by the next collection.
package history
