package devcli

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// DefaultImage is the pod image unless --image or [runpod] image says otherwise
// (Ubuntu 22.04, CUDA 12.9; it starts sshd from $PUBLIC_KEY).
const DefaultImage = "runpod/base:1.4.1-cuda1290-ubuntu2204"

// fileConfig is ~/.runpod/config.toml as far as runpod-gpu reads it. Other
// keys (runpodctl keeps its own there) are left alone.
type fileConfig struct {
	Runpod struct {
		APIKey string `toml:"api_key"`
		Image  string `toml:"image"`
	} `toml:"runpod"`
}

func configPath(home string) string { return filepath.Join(home, ".runpod", "config.toml") }

// apiKey is the RunPod API key of every command: RUNPOD_API_KEY (trimmed),
// else api_key under [runpod] in the config file; "" when neither is set.
func apiKey(getenv func(string) string, cfg fileConfig) string {
	return cmp.Or(strings.TrimSpace(getenv("RUNPOD_API_KEY")), cfg.Runpod.APIKey)
}

// maxConfigSize bounds the file read: it holds a key and an image name.
const maxConfigSize = 1 << 20

// loadConfig reads ~/.runpod/config.toml; a missing file is an empty config.
// Errors name the file and the line, never the text there: it holds the key.
func loadConfig(home string) (fileConfig, error) {
	var cfg fileConfig
	if home == "" {
		return cfg, nil
	}
	path := configPath(home)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cfg, nil
	case err != nil:
		return cfg, fmt.Errorf("read %s: %w", path, err)
	case len(data) > maxConfigSize:
		return cfg, fmt.Errorf("%s is larger than %d bytes: want a small TOML file with [runpod] api_key", path, maxConfigSize)
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fileConfig{}, fmt.Errorf("%s: line %d is not valid TOML; want e.g. [runpod] then api_key = \"…\"", path, pe.Position.Line)
		}
		// A type mismatch: the key exists but is not a string. Name the key only.
		return fileConfig{}, fmt.Errorf("%s: [runpod] api_key and image must be strings", path)
	}
	return cfg, nil
}
