package gate

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/org/runpod-gpu/pkg/gatecheck"
)

// The commits and app the gate job's tests share with pkg/gatecheck's tests.
var (
	head   = strings.Repeat("a", 40)
	merge  = strings.Repeat("b", 40)
	merge2 = strings.Repeat("c", 40) // the merge ref after the base moved
)

const ourApp = 4242

var payloadSHA = strings.Repeat("d", 64)

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// ok is an earlier successful gate of kind k for ref, as GitHub lists it.
func ok(id int64, ref string, k gatecheck.Kind, at time.Time) *github.CheckRun {
	return &github.CheckRun{
		ID: github.Int64(id), Name: github.String(gatecheck.DefaultCheckName), HeadSHA: github.String(head),
		ExternalID: github.String(gatecheck.ExternalIDPrefix + ref + ":" + string(k)),
		Status:     github.String("completed"), Conclusion: github.String("success"),
		HTMLURL:     github.String(fmt.Sprintf("https://github.com/o/r/runs/%d", id)),
		App:         &github.App{ID: github.Int64(ourApp)},
		CompletedAt: &github.Timestamp{Time: at},
	}
}
