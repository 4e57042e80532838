package workflowplay

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// ReadFileCommand reads the runner's file-command format (GITHUB_OUTPUT, GITHUB_ENV):
// name=value lines and name<<DELIMITER blocks; an unclosed block is an error.
func ReadFileCommand(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			if name == "" || delim == "" {
				return nil, fmt.Errorf("invalid format %q: want name<<DELIMITER", line)
			}
			var value []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				value = append(value, sc.Text())
			}
			if !closed {
				return nil, fmt.Errorf("matching delimiter not found %q", delim)
			}
			out[name] = strings.Join(value, "\n")
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("invalid format %q: want name=value or name<<DELIMITER", line)
		}
		out[name] = value
	}
	return out, sc.Err()
}
