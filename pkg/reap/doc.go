// Package reap is the scheduled orphan reaper: it lists every pod of the
// RunPod account, keeps to the pods this repository's GPU workflow provably
// owns, and reclaims those whose owning run completed, whose attempt was
// superseded, or which outlived the lifetime backstop (applied before any run
// lookup, so no run answer can keep an old pod alive), and debug-retained
// pods kept longer than the retention cap.
//
// The design separates knowing from doing. [View] reduces a listed pod to what
// a decision may use (never its environment), [Decide] is a pure function of
// that view and the [Facts] of one sweep (the clock, the owning runs, the
// retention records), and [Sweeper] gathers the facts, carries out the
// decisions (bounded deletion, cost report, cancellation of the owning run)
// and writes a [Record]. Any doubt leaves a pod alone: a pod that is not
// provably ours is skipped, and a pod whose facts could not be read is an
// error that fails the sweep visibly while the other pods carry on. An answer
// that does not describe what was asked for (another run's record, another
// run's artifacts) is no fact at all: the pod waits for the backstop.
//
// The retention artifact name it reads is defined once, in
// [ownership.ParseRetentionName], beside the pod names it protects, for
// provision to write without importing the reaper.
package reap
