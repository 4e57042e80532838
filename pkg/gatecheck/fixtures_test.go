package gatecheck

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// The commits and app the gate protocol's tests share (pkg/gate's tests have their own).
var (
	head   = strings.Repeat("a", 40)
	merge  = strings.Repeat("b", 40)
	merge2 = strings.Repeat("c", 40) // the merge ref after the base moved
)

const ourApp = 4242

var payloadSHA = strings.Repeat("d", 64)

// The head and tested ref of the publish and reuse-lookup edge tests.
var (
	pmHead  = strings.Repeat("a", 40)
	pmMerge = strings.Repeat("b", 40)
)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// gateRun builds a check run as GitHub returns it.
func gateRun(id int64, name, externalID, status, conclusion string, app int64, completed time.Time) *github.CheckRun {
	r := &github.CheckRun{
		ID: github.Int64(id), Name: github.String(name), HeadSHA: github.String(head),
		ExternalID: github.String(externalID), Status: github.String(status),
		HTMLURL: github.String(fmt.Sprintf("https://github.com/o/r/runs/%d", id)),
		App:     &github.App{ID: github.Int64(app)},
	}
	if conclusion != "" {
		r.Conclusion = github.String(conclusion)
	}
	if !completed.IsZero() {
		r.CompletedAt = &github.Timestamp{Time: completed}
	}
	return r
}
