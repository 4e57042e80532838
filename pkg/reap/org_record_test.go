package reap

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/wire"
)

// orgRecordFixture has one repository of each status and pods of each
// outcome the pods table shows or leaves out.
func orgRecordFixture() *OrgRecord {
	hour := &cost.Report{Price: cost.KnownPrice(money.PerHour(0.5), "test"), Window: cost.Window{Start: wire.KnownTime(orgNow.Add(-time.Hour)), End: wire.KnownTime(orgNow)}}
	return &OrgRecord{CheckedAt: orgNow, Execute: true, Organization: "acme", Repositories: []RepoRecord{
		{Repository: "acme/alpha", Status: RepoSwept, Pods: []PodRecord{
			{PodID: "p-deleted", RunID: 11, Attempt: 2, Decision: DecisionReclaim, Reason: ReasonRunCompleted, Detail: "run completed 1h ago", DeletedAt: wire.KnownTime(orgNow), Cost: hour},
			{PodID: "p-unconfirmed", RunID: 12, Attempt: 1, Decision: DecisionReclaim, Reason: ReasonLifetime, DeleteError: "DELETE 502"},
			{PodID: "p-kept", RunID: 13, Attempt: 1, Decision: DecisionKeep, Reason: ReasonRunActive},
		}},
		{Repository: "acme/beta", Status: RepoFailed, Reason: "lookup failed", Pods: []PodRecord{
			{PodID: "p-error", Decision: DecisionError, Reason: ReasonInstallationLookupFailed},
		}},
		{Repository: "acme/gamma", Status: RepoDeferred, Reason: "reserve", Pods: []PodRecord{
			{PodID: "p-deferred", Decision: DecisionDeferred, Reason: ReasonRateLimitReserve},
		}},
	}}
}

func TestOrgRecordMarkdown(t *testing.T) {
	md := orgRecordFixture().Markdown()
	for _, want := range []string{
		"### RunPod organization reaper: acme (executed)",
		"3 repositories — 1 swept, 0 skipped, 1 failed, 1 deferred; 0 pod(s) outside",
		"**1 repository failed:**",
		"**1 repository deferred**",
		"| acme/alpha | swept | 3 | 2 | 1 | 0 | 0 | 1 | |",
		"| acme/beta | **failed** | 1 | 0 | 0 | 0 | 0 | 1 | lookup failed |",
		"| acme/gamma | deferred | 1 | 0 | 0 | 0 | 1 | 0 | reserve |",
		"| acme/alpha | p-deleted | 11 | 2 | reclaim | run-completed: run completed 1h ago | 2026-11-02T12:00:00Z | $0.5000 |",
		"| acme/alpha | p-unconfirmed | 12 | 1 | reclaim | lifetime-exceeded | **unconfirmed:** DELETE 502 | |",
		"| acme/beta | p-error | | | error | installation-lookup-failed | | |",
		"> " + cost.Disclaimer,
	} {
		assert.Check(t, is.Contains(md, want))
	}
	for _, absent := range []string{"p-kept", "p-deferred", "more pod(s)"} {
		assert.Check(t, !strings.Contains(md, absent), "%s is not in the pods table", absent)
	}
	assert.Check(t, is.DeepEqual(orgRecordFixture().PodIDs(DecisionReclaim), []string{"p-deleted", "p-unconfirmed"}))
}

func TestOrgRecordMarkdownQuietParts(t *testing.T) {
	t.Run("dry run: no disclaimer", func(t *testing.T) {
		rec := orgRecordFixture()
		rec.Execute = false
		md := rec.Markdown()
		assert.Check(t, is.Contains(md, "(dry run — nothing deleted"))
		assert.Check(t, !strings.Contains(md, cost.Disclaimer))
	})
	t.Run("nothing failed, deferred or reclaimed", func(t *testing.T) {
		rec := &OrgRecord{CheckedAt: orgNow, Organization: "acme", Repositories: []RepoRecord{
			{Repository: "acme/alpha", Status: RepoSwept, Pods: []PodRecord{{PodID: "k", Decision: DecisionKeep}}}}}
		md := rec.Markdown()
		for _, absent := range []string{"repositories failed", "repositories deferred", "Reclaimed and unsettled pods", cost.Disclaimer} {
			assert.Check(t, !strings.Contains(md, absent), absent)
		}
	})
	t.Run("no repositories: no table", func(t *testing.T) {
		md := (&OrgRecord{CheckedAt: orgNow, Organization: "acme"}).Markdown()
		assert.Check(t, !strings.Contains(md, "| Repository |"))
	})
	t.Run("only failures: no disclaimer", func(t *testing.T) {
		rec := &OrgRecord{CheckedAt: orgNow, Execute: true, Organization: "acme", Repositories: []RepoRecord{
			{Repository: "acme/beta", Status: RepoFailed, Pods: []PodRecord{{PodID: "e", Decision: DecisionError}}}}}
		md := rec.Markdown()
		assert.Check(t, is.Contains(md, "| acme/beta | e |"))
		assert.Check(t, !strings.Contains(md, cost.Disclaimer))
	})
	t.Run("the pods table is capped", func(t *testing.T) {
		var pods []PodRecord
		for i := range maxSummaryRows + 2 {
			pods = append(pods, PodRecord{PodID: fmt.Sprintf("pod-%03d", i), Decision: DecisionReclaim})
		}
		rec := &OrgRecord{CheckedAt: orgNow, Organization: "acme", Repositories: []RepoRecord{{Repository: "acme/alpha", Status: RepoSwept, Pods: pods}}}
		md := rec.Markdown()
		assert.Check(t, is.Contains(md, fmt.Sprintf("| pod-%03d |", maxSummaryRows-1)))
		assert.Check(t, !strings.Contains(md, fmt.Sprintf("| pod-%03d |", maxSummaryRows)))
		assert.Check(t, is.Contains(md, "\n2 more pod(s) are in the decision record.\n"))
	})
}

func TestOrgRecordJSON(t *testing.T) {
	path := t.TempDir() + "/record.json"
	assert.NilError(t, orgRecordFixture().WriteFile(path))
	raw, err := orgRecordFixture().JSON()
	assert.NilError(t, err)
	assert.Check(t, strings.HasSuffix(string(raw), "}\n"))
	assert.Check(t, is.Contains(string(raw), `"organization": "acme"`))
	assert.ErrorContains(t, orgRecordFixture().WriteFile(t.TempDir()+"/missing/record.json"), "reap: write decision record")
}
