package ownership

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"strconv"
	"strings"
	"time"
)

// The Serverless lane's resource names are the record that an endpoint and
// its template belong to one run attempt of one repository: the lane writes
// them (ServerlessAttemptName), the reaper reads them (ParseServerlessName).
// They live here, beside the pod names, so that neither job imports the other.

// ServerlessNamePrefix starts every resource name the lane creates; the reaper
// recognises a repository's orphans by ServerlessNamePrefix + RepoSlug(repository) + "-".
const ServerlessNamePrefix = "rpg-sls-"

// ServerlessCleanupDeadline is the lane's default absolute cleanup deadline
// from setup: its resources are gone by then, so the reaper reclaims what is
// older (plus its margin) without asking GitHub.
const ServerlessCleanupDeadline = 30 * time.Minute

var slugRE = lazyre.Regexp{Pattern: `[^a-z0-9]+`}

// RepoSlug is the repository part of resource names: lowercase, [a-z0-9-], at most 32 characters.
func RepoSlug(repository string) string {
	s := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(repository), "-"), "-")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "-")
	}
	return s
}

// ServerlessAttemptName is a unique name for an attempt's resources:
// rpg-sls-<repo>-<run id>-<run attempt>-<8 hex random>.
func ServerlessAttemptName(repository string, runID int64, runAttempt int) (string, error) {
	var nonce [4]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s%s-%d-%d-%s", ServerlessNamePrefix, RepoSlug(repository), runID, runAttempt, hex.EncodeToString(nonce[:])), nil
}

var slsRestRE = lazyre.Regexp{Pattern: `^([1-9][0-9]{0,18})-([1-9][0-9]{0,4})-[0-9a-f]{8}$`}

// ParseServerlessName reads an endpoint or template name of the lane for
// repository: the attempt name (without "-tpl"), run id and run attempt; ok
// is false for any other name, another repository's included.
func ParseServerlessName(repository, name string) (attempt string, runID int64, runAttempt int, template, ok bool) {
	attempt, template = strings.CutSuffix(name, "-tpl")
	rest, found := strings.CutPrefix(attempt, ServerlessNamePrefix+RepoSlug(repository)+"-")
	if !found {
		return "", 0, 0, false, false
	}
	m := slsRestRE.FindStringSubmatch(rest)
	if m == nil {
		return "", 0, 0, false, false
	}
	id, err1 := strconv.ParseInt(m[1], 10, 64)
	n, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return "", 0, 0, false, false
	}
	return attempt, id, n, template, true
}
