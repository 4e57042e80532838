// Package actionimage builds and checks the suite's action image without a
// Docker daemon. The Dockerfile's final stage is the one definition of what
// the image holds: ParseDockerfile reads its COPY, ENV, ENTRYPOINT, CMD, USER
// and WORKDIR lines, Build lays out exactly those files from the build
// stages' outputs (go-containerregistry writes the image), and Verify checks
// an image, built here or pulled from the registry the release pushed to,
// against the same lines.
package actionimage

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// Copy is one COPY --from=<stage> line of the final stage.
type Copy struct {
	From    string   // the build stage copied from
	Sources []string // absolute paths in that stage; a trailing / copies a directory's content
	Dest    string   // absolute path in the image; a trailing / names a directory
	UID     int      // --chown (numeric only); 0 is root
	GID     int
	Mode    int64 // --chmod, or -1 to keep the source's permissions
	Line    int   // in the Dockerfile, for messages
}

// Definition is the Dockerfile's final stage: what goes into the image.
type Definition struct {
	Copies     []Copy
	Env        []string // KEY=value, in order
	Entrypoint []string // exec form; nil when the stage sets none
	Cmd        []string
	User       string // empty: root
	WorkDir    string // empty: /
}

// SyntaxError is a Dockerfile line the builder cannot follow; it names the
// line, what it says and what the builder expects instead.
type SyntaxError struct {
	Line     int
	Text     string
	Expected string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("Dockerfile line %d: %q: want %s", e.Line, e.Text, e.Expected)
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line    int
	keyword string // upper case
	args    string
}

// instructions splits a Dockerfile into instructions: comments and blank
// lines dropped, lines ending in a backslash joined to the next.
func instructions(text string) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction is dropped, as Docker does
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if body, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(body)
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(line)
		keyword, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, instruction{line: start, keyword: strings.ToUpper(keyword), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		keyword, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, instruction{line: start, keyword: strings.ToUpper(keyword), args: strings.TrimSpace(args)})
	}
	return out
}

// ParseDockerfile reads the final stage of a Dockerfile. The stage must be
// FROM scratch and use only COPY --from=<an earlier stage>, ENV, ENTRYPOINT
// and CMD in exec form, USER and WORKDIR: anything else is refused, so the
// image built here cannot silently differ from the one Docker builds.
func ParseDockerfile(text string) (*Definition, error) {
	ins := instructions(text)
	last := -1
	stages := map[string]bool{}
	for i, in := range ins {
		if in.keyword == "FROM" {
			last = i
			if f := strings.Fields(in.args); len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				stages[f[len(f)-1]] = true
			}
		}
	}
	if last < 0 {
		return nil, &SyntaxError{Line: 1, Text: firstLine(text), Expected: "a Dockerfile with a FROM line"}
	}
	from := ins[last]
	if f := strings.Fields(from.args); len(f) != 1 || f[0] != "scratch" {
		return nil, &SyntaxError{Line: from.line, Text: "FROM " + from.args, Expected: "a final stage FROM scratch (the action image holds only what its COPY lines copy)"}
	}
	def := &Definition{}
	for _, in := range ins[last+1:] {
		if err := def.apply(in, stages); err != nil {
			return nil, err
		}
	}
	if len(def.Copies) == 0 {
		return nil, &SyntaxError{Line: from.line, Text: "FROM scratch", Expected: "a final stage that copies something"}
	}
	return def, nil
}

// apply adds one instruction of the final stage to the definition.
func (def *Definition) apply(in instruction, stages map[string]bool) error {
	bad := func(expected string) error {
		return &SyntaxError{Line: in.line, Text: in.keyword + " " + in.args, Expected: expected}
	}
	switch in.keyword {
	case "COPY":
		c, err := parseCopy(in, stages)
		if err != nil {
			return err
		}
		def.Copies = append(def.Copies, c)
	case "ENV":
		env, ok := parseEnv(in.args)
		if !ok {
			return bad("ENV KEY=value ... (no quotes)")
		}
		def.Env = append(def.Env, env...)
	case "ENTRYPOINT", "CMD":
		var argv []string
		if err := json.Unmarshal([]byte(in.args), &argv); err != nil || len(argv) == 0 {
			return bad(`the exec form, a JSON array of strings such as ["/program"] (a scratch image has no shell)`)
		}
		if in.keyword == "ENTRYPOINT" {
			def.Entrypoint = argv
		} else {
			def.Cmd = argv
		}
	case "USER":
		if in.args == "" || strings.ContainsAny(in.args, " \t") {
			return bad("USER <name or uid>[:<group>]")
		}
		def.User = in.args
	case "WORKDIR":
		if !path.IsAbs(in.args) {
			return bad("WORKDIR with an absolute path")
		}
		def.WorkDir = in.args
	default:
		return bad("only COPY --from, ENV, ENTRYPOINT, CMD, USER and WORKDIR in the final stage: the builder follows no other instruction")
	}
	return nil
}

func firstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return line
}

// parseCopy reads COPY [--from=stage] [--chown=uid:gid] [--chmod=octal] src... dest.
func parseCopy(in instruction, stages map[string]bool) (Copy, error) {
	bad := func(expected string) error {
		return &SyntaxError{Line: in.line, Text: "COPY " + in.args, Expected: expected}
	}
	c := Copy{Mode: -1, Line: in.line}
	var rest []string
	for _, f := range strings.Fields(in.args) {
		name, value, _ := strings.Cut(f, "=")
		switch {
		case name == "--from":
			c.From = value
		case name == "--chown":
			u, g, ok := strings.Cut(value, ":")
			uid, err1 := strconv.Atoi(u)
			gid, err2 := strconv.Atoi(g)
			if !ok || err1 != nil || err2 != nil || uid < 0 || gid < 0 {
				return Copy{}, bad("--chown=<uid>:<gid> in numbers (a scratch image has no /etc/passwd to look names up in)")
			}
			c.UID, c.GID = uid, gid
		case name == "--chmod":
			mode, err := strconv.ParseInt(value, 8, 32)
			if err != nil || mode < 0 || mode > 0o7777 {
				return Copy{}, bad("--chmod=<octal mode> such as 0755")
			}
			c.Mode = mode
		case strings.HasPrefix(f, "--"):
			return Copy{}, bad("only --from, --chown and --chmod flags")
		case strings.HasPrefix(f, "["):
			return Copy{}, bad("COPY --from=<stage> <source>... <destination> (not the JSON form)")
		default:
			rest = append(rest, f)
		}
	}
	if c.From == "" || !stages[c.From] {
		return Copy{}, bad("--from=<a build stage named with FROM … AS <name>> (the image is made of build outputs, not of the build context)")
	}
	if len(rest) < 2 {
		return Copy{}, bad("at least one source and a destination")
	}
	c.Sources, c.Dest = rest[:len(rest)-1], rest[len(rest)-1]
	for _, p := range append([]string{c.Dest}, c.Sources...) {
		if !path.IsAbs(p) || strings.ContainsAny(p, "*?[$") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
			return Copy{}, bad("absolute paths without wildcards, variables or ..")
		}
	}
	if len(c.Sources) > 1 && !strings.HasSuffix(c.Dest, "/") {
		return Copy{}, bad("a destination ending in / when copying several sources")
	}
	return c, nil
}

// parseEnv reads ENV KEY=value KEY2=value2 or the old ENV KEY value form.
func parseEnv(args string) ([]string, bool) {
	if strings.ContainsAny(args, `"'\`) {
		return nil, false
	}
	fields := strings.Fields(args)
	if len(fields) == 0 {
		return nil, false
	}
	if !strings.Contains(fields[0], "=") {
		if len(fields) < 2 {
			return nil, false
		}
		return []string{fields[0] + "=" + strings.Join(fields[1:], " ")}, true
	}
	for _, f := range fields {
		if k, _, ok := strings.Cut(f, "="); !ok || k == "" {
			return nil, false
		}
	}
	return fields, true
}
