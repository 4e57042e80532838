package cleanup

import (
	"os"
	"path/filepath"
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

func TestTriggerOf(t *testing.T) {
	for event, want := range map[string]cost.Trigger{
		"workflow_dispatch": cost.TriggerManual,
		"pull_request":      cost.TriggerAutomatic,
		"schedule":          cost.TriggerAutomatic,
		"":                  cost.TriggerAutomatic,
	} {
		assert.Check(t, is.Equal(TriggerOf(event), want), event)
	}
}
