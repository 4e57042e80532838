package cleanup

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/cost"
)

func TestWriteArtifactFailsVisibly(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	assert.NilError(t, os.WriteFile(blocker, nil, 0o644))
	_, err := WriteArtifact(filepath.Join(blocker, "dir"), cost.Artifact{})
	assert.ErrorContains(t, err, "cost artifact: mkdir "+blocker+": not a directory")

	dir := t.TempDir()
	assert.NilError(t, os.Mkdir(filepath.Join(dir, cost.ArtifactFileName), 0o755))
	_, err = WriteArtifact(dir, cost.Artifact{})
	assert.ErrorContains(t, err, "cost artifact: open "+filepath.Join(dir, cost.ArtifactFileName)+": is a directory")
}

// The cost artifact is published: a key in a note or a reason (one the tests
// printed, say) leaves in none of its forms, and the file still parses.
func TestWriteArtifactRedactsKeys(t *testing.T) {
	const key = "rpa_LEAKEDRUNPODKEY0123456789ABCDEFGHIJKL"
	encoded := base64.StdEncoding.EncodeToString([]byte(key))
	art := cost.Artifact{Run: cost.Run{ID: 1, Attempt: 1, Trigger: cost.TriggerAutomatic}, Action: "cleanup",
		Report: cost.Report{Notes: []string{"tests printed " + key + " and " + encoded + " and ghs_LeakedInstallToken0123456789abcdefghi"}}}
	path, err := WriteArtifact(t.TempDir(), art)
	assert.NilError(t, err)
	data, err := os.ReadFile(path)
	assert.NilError(t, err)
	for _, leaked := range []string{key, encoded, "ghs_Leaked"} {
		assert.Check(t, !strings.Contains(string(data), leaked), "%s published", leaked)
	}
	got, err := cost.ParseArtifact(data)
	assert.NilError(t, err)
	assert.Check(t, is.Equal(got.Report.Notes[0], "tests printed *** and *** and ***"))
}
