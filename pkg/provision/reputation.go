package provision

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/reputation"
)

// ranker builds the plan's ranker from the request's reputation record as
// of now; nil (the seed's plan) without a record or without evidence in it.
func (r *run) ranker() plan.Ranker {
	if r.req.Reputation == nil {
		return nil
	}
	e := reputation.New(*r.req.Reputation, r.now(), reputation.DefaultParams)
	if e.Empty() {
		r.logf("reputation: no evidence yet: candidates in the seed's order")
		return nil
	}
	q := e.Quarantined()
	held := "none"
	if len(q) > 0 {
		held = strings.Join(q, "; ")
	}
	r.logf("reputation: %d observation(s); candidates ranked by expected cost to a working runner, pinned to good data centers; quarantined: %s",
		len(r.req.Reputation.Observations), held)
	return e.Rank
}

// LoadReputation reads the reputation record at path, given through the
// action input named input. An empty path means no record. A missing file is
// a cold start (the first runs have no history yet), reported in the note.
// An unreadable or invalid record comes back as problem, naming the input and
// the path, with no record: the caller warns and plans in the seed's order.
// The record only orders candidates inside the reviewed allowlist, and it is
// downloaded from an artifact: a truncated download, a newer format or a
// planted file must not stop every lane (nor steer it).
func LoadReputation(input, path string) (rec *reputation.Record, note string, problem error) {
	if strings.TrimSpace(path) == "" {
		return nil, "", nil
	}
	b, err := readBounded(path, reputation.MaxRecordBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Sprintf("reputation: %s %q does not exist yet: candidates in the seed's order", input, path), nil
	case err != nil:
		return nil, "", fmt.Errorf("input %s: %q: %w; want a readable reputation record (JSON) or an empty value", input, path, err)
	}
	r, err := reputation.Parse(b)
	if err != nil {
		return nil, "", fmt.Errorf("input %s: %q: %w", input, path, err)
	}
	return &r, "", nil
}

// readBounded reads a regular file of at most limit bytes: a record is
// downloaded from an artifact, and a larger one (or a device that never
// ends) is not read into memory.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes, which no reputation record is", limit)
	}
	return b, nil
}
