package devcli

import (
	"testing"

	"gotest.tools/v3/assert"
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
