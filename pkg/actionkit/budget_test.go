package actionkit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/actionio"
	"github.com/org/runpod-gpu/pkg/budget"
	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/runpod"
	"github.com/org/runpod-gpu/pkg/spend"
)

func TestBudgetFollowsTheConfiguration(t *testing.T) {
	var log bytes.Buffer
	io := actionio.New(&log, func(k string) string { return map[string]string{"GITHUB_REPOSITORY": "org/gpu"}[k] }, nil)
	rp := runpod.New("http://127.0.0.1:1", "key")
	cfg := config.Default()

	g, err := Budget(io, cfg, rp, SpendRecordInput{}, time.Hour)
	assert.NilError(t, err)
	assert.Check(t, g == nil, "no budget configured: no check")

	daily := 50 * money.Cent
	cfg.Budget = &config.Budget{DailyUSD: &daily}
	dir := t.TempDir()
	g, err = Budget(io, cfg, rp, SpendRecordInput{SpendRecord: filepath.Join(dir, "missing.json")}, time.Hour)
	assert.NilError(t, err)
	guard := g.(*budget.Guard)
	assert.Check(t, is.DeepEqual(guard.Limits, spend.Limits{DailyUSD: 50 * money.Cent}))
	assert.Check(t, is.Equal(guard.Repository, "org/gpu"))
	assert.Check(t, is.Equal(guard.PodBound, time.Hour))
	assert.Check(t, guard.Record == nil)
	assert.Check(t, is.Contains(log.String(), "does not exist yet"))

	rec, err := (budget.Record{WrittenAt: time.Now(), Since: "2026-10-01", Until: "2026-10-13"}).Marshal()
	assert.NilError(t, err)
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "spend.json"), rec, 0o644))
	g, err = Budget(io, cfg, rp, SpendRecordInput{SpendRecord: filepath.Join(dir, "spend.json")}, time.Hour)
	assert.NilError(t, err)
	assert.Check(t, g.(*budget.Guard).Record != nil, "the record is read")

	assert.NilError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644))
	g, err = Budget(io, cfg, rp, SpendRecordInput{SpendRecord: filepath.Join(dir, "bad.json")}, time.Hour)
	assert.NilError(t, err, "an unreadable record is a warning: billing may still be readable")
	assert.Check(t, g.(*budget.Guard).Record == nil)
	assert.Check(t, is.Contains(log.String(), "::warning::input spend-record: spend record:"))
}
