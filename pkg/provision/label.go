package provision

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// MaxRunnerNameLen is GitHub's limit on a self-hosted runner's name; the
// per-attempt label doubles as the runner's name, so it must fit.
const MaxRunnerNameLen = 64

// NonceBytes is the size of the random part of a runner label: 64 bits from
// crypto/rand, so no job can guess the label of the paid runner and ask for it.
const NonceBytes = 8

// labelPrefixRE is what a label prefix may hold: one plain label word, since
// it becomes a runs-on label and the runner's name.
var labelPrefixRE = lazyre.Regexp{Pattern: `^[A-Za-z0-9][A-Za-z0-9._-]*$`}

// randRead is crypto/rand's reader; a test swaps it to prove a failure is fatal.
var randRead = rand.Read

// NewRunnerLabel builds one attempt's runner label and name,
// <prefix>-<run>-<attempt>-c<N>-<16 hex>: the readable part tells a human
// which run attempt and candidate it serves, the nonce makes it unguessable.
// A new nonce is drawn on every call, so every candidate of every attempt has
// its own label. It never falls back to a predictable label.
func NewRunnerLabel(prefix string, runID int64, attempt, candidate int) (string, error) {
	return newRunnerLabelFrom(randRead, prefix, runID, attempt, candidate)
}

func newRunnerLabelFrom(read func([]byte) (int, error), prefix string, runID int64, attempt, candidate int) (string, error) {
	if err := CheckLabelPrefix(prefix, runID, attempt, candidate); err != nil {
		return "", err
	}
	nonce := make([]byte, NonceBytes)
	if _, err := io.ReadFull(readerFunc(read), nonce); err != nil {
		return "", fmt.Errorf("runner label: no randomness for its nonce (%v); refusing a guessable label", err)
	}
	return fmt.Sprintf("%s-%d-%d-c%d-%s", prefix, runID, attempt, candidate, hex.EncodeToString(nonce)), nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

// CheckLabelPrefix checks that prefix is a plain label word and that the
// label it makes for candidate fits GitHub's runner-name limit.
func CheckLabelPrefix(prefix string, runID int64, attempt, candidate int) error {
	if !labelPrefixRE.MatchString(prefix) {
		return fmt.Errorf("runner-label-prefix: got %q; want letters, digits, '.', '_' or '-', starting with a letter or digit", prefix)
	}
	n := len(fmt.Sprintf("%s-%d-%d-c%d-", prefix, runID, attempt, candidate)) + 2*NonceBytes
	if n > MaxRunnerNameLen {
		return fmt.Errorf("runner-label-prefix: %q makes a %d-character runner name for run %d attempt %d; GitHub allows %d: want a prefix of at most %d characters",
			prefix, n, runID, attempt, MaxRunnerNameLen, len(prefix)-(n-MaxRunnerNameLen))
	}
	return nil
}
