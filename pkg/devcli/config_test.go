package devcli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// Every command reads the key through apiKey, so the Serverless job client and
// the pod client can never disagree on a padded RUNPOD_API_KEY.
func TestAPIKeyTrimsTheEnvironmentElseReadsTheFile(t *testing.T) {
	file := fileConfig{}
	file.Runpod.APIKey = "rpa_from_file"
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == "RUNPOD_API_KEY" {
				return v
			}
			return ""
		}
	}
	assert.Equal(t, apiKey(env(" rpa_from_env\n"), file), "rpa_from_env")
	assert.Equal(t, apiKey(env(" \t"), file), "rpa_from_file", "a blank variable is unset")
	assert.Equal(t, apiKey(env(""), file), "rpa_from_file")
	assert.Equal(t, apiKey(env(""), fileConfig{}), "")
}

// RunPod's own tools keep the key under [default]; runpod-gpu's [runpod]
// wins over it, and the environment over both.
func TestAPIKeyFromRunPodsDefaultProfile(t *testing.T) {
	w := newWorld(t)
	delete(w.env, "RUNPOD_API_KEY")
	assert.NilError(t, os.MkdirAll(filepath.Join(w.home, ".runpod"), 0o700))
	cfg := filepath.Join(w.home, ".runpod", "config.toml")
	assert.NilError(t, os.WriteFile(cfg, []byte("[default]\napi_key = \""+testKey+"\"\n"), 0o600))
	r := w.run("ls")
	assert.Equal(t, r.code, ExitOK, r.stderr)
	assert.Check(t, !strings.Contains(r.stderr, "warning"), "a 0600 file draws no warning")

	file := fileConfig{}
	file.Default.APIKey = "rpa_default"
	noEnv := func(string) string { return "" }
	assert.Equal(t, apiKey(noEnv, file), "rpa_default")
	file.Runpod.APIKey = "rpa_runpod"
	assert.Equal(t, apiKey(noEnv, file), "rpa_runpod")
}

// A config file holding the key that other users can read draws a warning
// saying how to fix it; the key itself is never printed.
func TestConfigFileReadableByOthersDrawsAWarning(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		t.Run(mode.String(), func(t *testing.T) {
			w := newWorld(t)
			delete(w.env, "RUNPOD_API_KEY")
			assert.NilError(t, os.MkdirAll(filepath.Join(w.home, ".runpod"), 0o700))
			cfg := filepath.Join(w.home, ".runpod", "config.toml")
			assert.NilError(t, os.WriteFile(cfg, []byte("[runpod]\napi_key = \""+testKey+"\"\n"), 0o600))
			assert.NilError(t, os.Chmod(cfg, mode))
			r := w.run("ls")
			assert.Equal(t, r.code, ExitOK, r.stderr)
			assert.Check(t, is.Contains(r.stderr, "runpod-gpu: warning: "+cfg+" holds your RunPod API key and other users can read it"))
			assert.Check(t, is.Contains(r.stderr, "chmod 600 "+cfg))
		})
	}
}
