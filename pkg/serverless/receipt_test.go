package serverless

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func p2time() time.Time { return time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC) }

func TestReceiptIsNeverOverwritten(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ownership-01.json")
	first := &Receipt{Version: ReceiptVersion, Attempt: "rpg-sls-a", CreatedAt: p2time()}
	assert.NilError(t, CreateReceipt(file, first))

	second := &Receipt{Version: ReceiptVersion, Attempt: "rpg-sls-b", CreatedAt: p2time()}
	err := CreateReceipt(file, second)
	assert.Check(t, errors.Is(err, ErrReceiptExists), "%v", err)
	assert.ErrorContains(t, SaveReceipt(file, second), "never overwritten")

	got, err := LoadReceipt(file)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got.Attempt, "rpg-sls-a"))

	// The same attempt updates its own receipt: intent, then the id.
	first.Template = Resource{Name: "rpg-sls-a-tpl", State: StateIntent, IntentAt: p2time()}
	assert.NilError(t, SaveReceipt(file, first))
	first.Template.State, first.Template.ID = StateCreated, "tpl1"
	assert.NilError(t, SaveReceipt(file, first))
	got, err = LoadReceipt(file)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got.Template.ID, "tpl1"))
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".*tmp*"))
	assert.Check(t, is.Len(left, 0), "no temporary files stay behind")
}

func TestReceiptUnresolved(t *testing.T) {
	cases := []struct {
		name string
		r    Receipt
		want bool
	}{
		{"empty", Receipt{}, false},
		{"intent without id", Receipt{Endpoint: Resource{State: StateIntent}}, true},
		{"unresolved", Receipt{Template: Resource{State: StateUnresolved}}, true},
		{"created", Receipt{Template: Resource{State: StateCreated, ID: "t"}, Endpoint: Resource{State: StateCreated, ID: "e"}}, false},
	}
	for _, tc := range cases {
		assert.Check(t, is.Equal(tc.r.Unresolved(), tc.want), tc.name)
	}
}

func TestLoadReceiptRejectsForeignFiles(t *testing.T) {
	dir := t.TempDir()
	assert.NilError(t, os.WriteFile(filepath.Join(dir, "x.json"), []byte(`{"version":1}`), 0o600))
	_, err := LoadReceipt(filepath.Join(dir, "x.json"))
	assert.ErrorContains(t, err, "want version 1 and an attempt name")
}
