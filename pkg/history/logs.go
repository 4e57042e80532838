package history

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/gatecheck"
	"github.com/org/runpod-gpu/pkg/lazyre"
	"github.com/org/runpod-gpu/pkg/wire"
)

const (
	// maxLogBytes bounds what is read, decompressed, from one attempt's logs.
	maxLogBytes = 256 << 20
	// maxLineBytes bounds one log line; a longer one ends that file's scan.
	maxLineBytes = 1 << 20
	// maxProblems bounds the malformed-line messages kept per attempt.
	maxProblems = 10
)

// loggedAttempt is a runpod-gpu::attempt line and when it was logged.
type loggedAttempt struct {
	cost.Attempt
	at wire.Time
}

// logScan is what an attempt's logs say.
type logScan struct {
	attempts []loggedAttempt
	reports  []cost.Report
	gates    []gatecheck.ExternalID // gate markers, in log order
	seals    map[string]bool        // SHA-256 of the cost artifact files lane jobs vouched for
	last     wire.Time              // the latest log timestamp
	problems []string               // malformed structured lines and unreadable files
	skipped  int                    // problems beyond maxProblems
	ignored  []string               // jobs whose logs were not read: not the lane's own
	// usage are the GPU usage samples the GPU jobs logged (UsageLinePrefix),
	// by pod id ("" for a job that named none): read from the untrusted
	// jobs, since only the right-sizing advice takes them.
	usage map[string]*bytes.Buffer
}

// scanLogs reads a GitHub logs archive. The archive holds each job's log as
// "<n>_<job>.txt" and, in a "<job>/" folder, the same lines again step by
// step; the step files are read only for a job without its own file, so no
// line is counted twice. Only the files of jobs trusted reports true for are
// read: any other job (the GPU job runs the pull request's code) could print
// fake cost lines and gate markers.
func scanLogs(data []byte, trusted func(job string) bool) (logScan, error) {
	var s logScan
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return s, fmt.Errorf("logs archive: %w", err)
	}
	budget := int64(maxLogBytes)
	ignored := map[string]bool{}
	for _, f := range jobLogFiles(zr.File) {
		scan := s.scanLine
		if job := archiveJob(f.Name); !trusted(job) {
			if !ignored[job] {
				ignored[job] = true
				s.ignored = append(s.ignored, job)
			}
			scan = s.scanUsageLine
		}
		rc, err := f.Open()
		if err != nil {
			s.problem("%s: %v", f.Name, err)
			continue
		}
		n, err := s.scanFile(f.Name, io.LimitReader(rc, budget), scan)
		rc.Close()
		budget -= n
		if err != nil {
			s.problem("%s: %v", f.Name, err)
		}
		if budget <= 0 {
			s.problem("logs larger than %d bytes: the rest is not read", maxLogBytes)
			break
		}
	}
	return s, nil
}

// jobFileRE matches a job's own log file, "<n>_<job>.txt".
var jobFileRE = lazyre.Regexp{Pattern: `^[0-9]+_(.+)\.txt$`}

// archiveJob is the job a file of the archive belongs to: the folder of a
// step file, the "<job>" of "<n>_<job>.txt", else "" (no job is trusted).
func archiveJob(name string) string {
	if folder, _, nested := strings.Cut(name, "/"); nested {
		return folder
	}
	if m := jobFileRE.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// jobLogFiles picks the files to read, in name order: top-level job logs,
// and step logs of jobs that have no top-level file.
func jobLogFiles(files []*zip.File) []*zip.File {
	jobs := map[string]bool{}
	for _, f := range files {
		if m := jobFileRE.FindStringSubmatch(f.Name); m != nil && !strings.Contains(f.Name, "/") {
			jobs[m[1]] = true
		}
	}
	var keep []*zip.File
	for _, f := range files {
		if f.FileInfo().IsDir() {
			continue
		}
		if folder, _, nested := strings.Cut(f.Name, "/"); nested && jobs[folder] {
			continue
		}
		keep = append(keep, f)
	}
	slices.SortFunc(keep, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	return keep
}

// scanFile reads one log file line by line and returns the bytes it read.
func (s *logScan) scanFile(name string, r io.Reader, scan func(file string, n int, text string)) (int64, error) {
	counted := &countingReader{r: r}
	sc := bufio.NewScanner(counted)
	sc.Buffer(make([]byte, 0, 4<<10), maxLineBytes) // grows for long lines
	for n := 1; sc.Scan(); n++ {
		scan(name, n, sc.Text())
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		err = fmt.Errorf("a line longer than %d bytes: the rest of the file is not read", maxLineBytes)
	}
	return counted.n, err
}

func (s *logScan) scanLine(file string, n int, text string) {
	at, rest := splitStamp(text)
	if t, ok := at.Get(); ok {
		if last, known := s.last.Get(); !known || t.After(last) {
			s.last = at
		}
	}
	if !strings.Contains(rest, cost.LinePrefix) {
		if strings.Contains(rest, gatecheck.ExternalIDPrefix) {
			s.gates = append(s.gates, gateMarkers(rest)...)
		}
		return
	}
	line, ok, err := cost.ParseLine(rest)
	switch {
	case ok && err != nil:
		s.problem("%s line %d: %v", file, n, err)
	case ok && line.Kind == cost.LineAttempt:
		s.attempts = append(s.attempts, loggedAttempt{Attempt: line.Attempt, at: at})
	case ok && line.Kind == cost.LineCost:
		s.reports = append(s.reports, line.Cost)
	case ok && line.Kind == cost.LineSeal:
		if s.seals == nil {
			s.seals = map[string]bool{}
		}
		s.seals[line.Seal.SHA256] = true
	case strings.Contains(rest, gatecheck.ExternalIDPrefix):
		s.gates = append(s.gates, gateMarkers(rest)...)
	}
}

// scanUsageLine keeps a GPU usage sample a GPU job logged
// ("runpod-gpu-usage <pod id> <CSV sample>"); any other line of that job is
// not read.
func (s *logScan) scanUsageLine(_ string, _ int, text string) {
	_, rest := splitStamp(text)
	rest, ok := strings.CutPrefix(strings.TrimLeft(rest, " \t"), UsageLinePrefix)
	if !ok {
		return
	}
	pod, sample, _ := strings.Cut(rest, " ")
	if pod == "-" {
		pod = ""
	}
	if s.usage == nil {
		s.usage = map[string]*bytes.Buffer{}
	}
	buf := s.usage[pod]
	if buf == nil {
		buf = &bytes.Buffer{}
		s.usage[pod] = buf
	}
	if buf.Len() < maxUsageBytes {
		buf.WriteString(sample + "\n")
	}
}

func (s *logScan) problem(format string, args ...any) {
	if len(s.problems) >= maxProblems {
		s.skipped++
		return
	}
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// splitStamp cuts the timestamp GitHub puts before every log line.
func splitStamp(text string) (wire.Time, string) {
	text = strings.TrimRight(text, "\r")
	first, rest, found := strings.Cut(text, " ")
	// Only a token that starts like a date is worth parsing.
	if !found || len(first) < len("2006-01-02") || first[0] < '0' || first[0] > '9' {
		return wire.Time{}, text
	}
	t, err := wire.ParseTime(first)
	if err != nil {
		return wire.Time{}, text
	}
	return wire.KnownTime(t), rest
}

// gateMarkers finds the gate markers (external_id, defined by pkg/gatecheck) a
// log line names, e.g. the gate action's "published runpod-gpu-gate:v1:<sha>:reused (…)".
func gateMarkers(text string) []gatecheck.ExternalID {
	var ids []gatecheck.ExternalID
	for rest := text; ; {
		i := strings.Index(rest, gatecheck.ExternalIDPrefix)
		if i < 0 {
			return ids
		}
		rest = rest[i:]
		end := strings.IndexFunc(rest, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == ':' || r == '-')
		})
		token := rest
		if end >= 0 {
			token = rest[:end]
		}
		if id, err := gatecheck.ParseExternalID(strings.TrimRight(token, ":-")); err == nil {
			ids = append(ids, id)
		}
		rest = rest[len(gatecheck.ExternalIDPrefix):]
	}
}

// readArtifact reads the cost artifact file out of an artifact's archive,
// with the seal of its exact bytes.
func readArtifact(data []byte) (cost.Artifact, cost.Seal, error) {
	body, err := artifactFile(data)
	if err != nil {
		return cost.Artifact{}, cost.Seal{}, err
	}
	art, err := cost.ParseArtifact(body)
	return art, cost.SealOf(body), err
}

// artifactFile returns the cost artifact file's bytes out of an artifact's archive.
func artifactFile(data []byte) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	for _, f := range zr.File {
		if path.Base(f.Name) != cost.ArtifactFileName {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		body, err := io.ReadAll(io.LimitReader(rc, maxArtifactBytes+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		if len(body) > maxArtifactBytes {
			return nil, fmt.Errorf("%s: more than %d bytes", f.Name, maxArtifactBytes)
		}
		return body, nil
	}
	return nil, fmt.Errorf("archive has no %s", cost.ArtifactFileName)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
