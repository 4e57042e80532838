package devcli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/BurntSushi/toml"

	"github.com/org/runpod-gpu/pkg/runpod"
)

// DefaultImage is the pod image unless --image or [runpod] image says otherwise
// (Ubuntu 22.04, CUDA 12.9; it starts sshd from $PUBLIC_KEY).
const DefaultImage = "runpod/base:1.4.1-cuda1290-ubuntu2204"

// fileConfig is ~/.runpod/config.toml as far as runpod-gpu reads it: its
// own [runpod] table, and api_key of the [default] profile RunPod's own tools
// write there. Other keys (runpodctl keeps its own there) are left alone.
type fileConfig struct {
	Runpod struct {
		APIKey string `toml:"api_key"`
		Image  string `toml:"image"`
	} `toml:"runpod"`
	Default struct {
		APIKey string `toml:"api_key"`
	} `toml:"default"`
}

func configPath(home string) string { return filepath.Join(home, ".runpod", "config.toml") }

// apiKey is the RunPod API key of every command: RUNPOD_API_KEY (trimmed),
// else api_key under [runpod] in the config file, else api_key of its
// [default] profile (RunPod's own `runpod config`); "" when none is set.
func apiKey(getenv func(string) string, cfg fileConfig) string {
	return runpod.KeyFromEnv(getenv, cfg.Runpod.APIKey, cfg.Default.APIKey)
}

// maxConfigSize bounds the file read: it holds a key and an image name.
const maxConfigSize = 1 << 20

// loadConfig reads ~/.runpod/config.toml; a missing file is an empty config.
// Errors name the file and the line, never the text there: it holds the key.
// warning is set when the file holds a key and other users may read it.
func loadConfig(home string) (cfg fileConfig, warning string, err error) {
	if home == "" {
		return cfg, "", nil
	}
	path := configPath(home)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cfg, "", nil
	case err != nil:
		return cfg, "", fmt.Errorf("read %s: %w", path, err)
	case len(data) > maxConfigSize:
		return cfg, "", fmt.Errorf("%s is larger than %d bytes: want a small TOML file with [runpod] api_key", path, maxConfigSize)
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fileConfig{}, "", fmt.Errorf("%s: line %d is not valid TOML; want e.g. [runpod] then api_key = \"…\"", path, pe.Position.Line)
		}
		// A type mismatch: the key exists but is not a string. Name the key only.
		return fileConfig{}, "", fmt.Errorf("%s: [runpod] api_key and image, and [default] api_key, must be strings", path)
	}
	if cfg.Runpod.APIKey != "" || cfg.Default.APIKey != "" {
		warning = exposedWarning(path)
	}
	return cfg, warning, nil
}

// exposedWarning says how to fix a file holding the API key that users other
// than its owner may read; "" when they may not (or where modes mean nothing).
func exposedWarning(path string) string {
	st, err := os.Stat(path)
	if err != nil || runtime.GOOS == "windows" || st.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("%s holds your RunPod API key and other users can read it (mode %04o): run chmod 600 %s", path, st.Mode().Perm(), path)
}
