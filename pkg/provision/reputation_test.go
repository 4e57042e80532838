package provision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/reputation"
)

// TestLoadReputation: no path is no record; a missing file is a cold start
// said in the note; an unreadable or invalid record is a problem naming the
// input and the path (the action warns), with no record.
func TestLoadReputation(t *testing.T) {
	dir := t.TempDir()
	valid := filepath.Join(dir, "rep.json")
	assert.NilError(t, os.WriteFile(valid, []byte(`{"version":1,"observations":[]}`), 0o600))
	invalid := filepath.Join(dir, "bad.json")
	assert.NilError(t, os.WriteFile(invalid, []byte(`{`), 0o600))
	missing := filepath.Join(dir, "none.json")

	rec, note, err := LoadReputation("reputation-file", "  ")
	assert.Check(t, rec == nil && note == "" && err == nil)

	rec, note, err = LoadReputation("reputation-file", missing)
	assert.Check(t, rec == nil && err == nil)
	assert.Check(t, is.Equal(note, `reputation: reputation-file "`+missing+`" does not exist yet: candidates in the seed's order`))

	_, _, err = LoadReputation("reputation-file", dir) // a directory cannot be read as a file
	assert.Check(t, is.ErrorContains(err, `input reputation-file: "`+dir+`": `))
	assert.Check(t, is.ErrorContains(err, "want a readable reputation record (JSON) or an empty value"))

	_, _, err = LoadReputation("reputation-file", invalid)
	assert.Check(t, is.ErrorContains(err, `input reputation-file: "`+invalid+`": `))

	want, perr := reputation.Parse([]byte(`{"version":1,"observations":[]}`))
	if perr != nil { // the record's format is reputation's: only compare when it accepts this one
		t.Skipf("reputation.Parse: %v", perr)
	}
	rec, note, err = LoadReputation("reputation-file", valid)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(note, ""))
	assert.Check(t, is.DeepEqual(*rec, want))
}

// The record comes from an artifact: a file larger than any record, or one
// with more observations than a record keeps, is refused with no record,
// before it is read whole.
func TestLoadReputationRefusesAnUnboundedRecord(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	assert.NilError(t, os.WriteFile(big, []byte(`{"version":1,"observations":[]}`+strings.Repeat(" ", reputation.MaxRecordBytes)), 0o600))
	rec, _, err := LoadReputation("reputation-file", big)
	assert.Check(t, rec == nil)
	assert.Check(t, is.ErrorContains(err, "larger than 2097152 bytes"))

	var b strings.Builder
	b.WriteString(`{"version":1,"observations":[`)
	for i := range reputation.MaxObservations + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"at":"2026-10-06T09:00:00Z","gpu":"NVIDIA L4","dataCenter":"EU-RO-1","ok":true,"seconds":1}`)
	}
	b.WriteString("]}")
	many := filepath.Join(dir, "many.json")
	assert.NilError(t, os.WriteFile(many, []byte(b.String()), 0o600))
	rec, _, err = LoadReputation("reputation-file", many)
	assert.Check(t, rec == nil)
	assert.Check(t, is.ErrorContains(err, "2001 observations; want at most 2000"))
}
