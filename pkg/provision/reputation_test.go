package provision

import (
	"os"
	"path/filepath"
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
