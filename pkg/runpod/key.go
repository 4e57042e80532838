package runpod

import "strings"

// KeyEnv is the environment variable every command reads the API key from.
const KeyEnv = "RUNPOD_API_KEY"

// Key is the API key as every reader takes it: the first of values that is
// not blank, without the white space around it (an echoed or pasted key's
// newline would otherwise be sent, and refused, as part of the key); "" when
// all are blank.
func Key(values ...string) string {
	for _, v := range values {
		if k := strings.TrimSpace(v); k != "" {
			return k
		}
	}
	return ""
}

// KeyFromEnv is Key of RUNPOD_API_KEY, then of fallbacks (a config file's
// keys, in the order they are trusted).
func KeyFromEnv(getenv func(string) string, fallbacks ...string) string {
	return Key(append([]string{getenv(KeyEnv)}, fallbacks...)...)
}
