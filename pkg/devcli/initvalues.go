package devcli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/org/runpod-gpu/pkg/callers"
	"github.com/org/runpod-gpu/pkg/money"
)

// MaxInitRunSpendUSD bounds --max-run-spend: a run of the lane is a few
// pods for an hour or two, so a ceiling above this is a typo (1e9), not a budget.
const MaxInitRunSpendUSD = 1000

// initSpendLimit is what --max-run-spend (and its question) may be.
var initSpendLimit = money.Limit{Min: money.Micro, Max: MaxInitRunSpendUSD * money.Dollar,
	Want: fmt.Sprintf("a positive amount of USD, at most %d", MaxInitRunSpendUSD)}

// expressionOpen starts a GitHub Actions expression: a value holding it,
// written into a caller workflow, would be evaluated by the runner (and
// could read secrets or the event's attacker-controlled text).
const expressionOpen = "${{"

// checkInitFlags checks init's flags before anything is asked, read or
// written: the money flag's range, and no expression in a value written
// into a workflow.
func checkInitFlags(f initFlags) error {
	if f.maxRunSpend != "" {
		if _, err := money.Parse("--max-run-spend", f.maxRunSpend, initSpendLimit); err != nil {
			return fail(ExitUsage, "%v (omit it to be asked)", err)
		}
	}
	if err := checkNoExpression(map[string][]string{
		"--test-command": {f.testCommand}, "--workflows": f.workflows, "--suite": {f.suite}, "--gpus": f.gpus,
		"--build-command": {f.buildCommand}, "--build-image": {f.buildImage}}); err != nil {
		return err
	}
	return checkBuildFlags(f)
}

// checkBuildFlags checks the own-job shape's flags: a command that is not
// blank, an image only with a command, and an image pinned.
func checkBuildFlags(f initFlags) error {
	switch {
	case f.buildCommand == "" && f.buildImage != "":
		return fail(ExitUsage, "--build-image %q without --build-command: the image is where the build command runs; add --build-command (e.g. \"make archive\")", f.buildImage)
	case f.buildCommand != "" && strings.TrimSpace(f.buildCommand) == "":
		return fail(ExitUsage, "--build-command %q: want the command that writes %s (e.g. \"make archive\")", f.buildCommand, callers.TestArchive)
	case f.buildImage != "":
		if err := callers.CheckBuildImage(f.buildImage); err != nil {
			return fail(ExitUsage, "--build-image: %v", err)
		}
	}
	return nil
}

// checkInitValues checks what init is about to write, answers on the
// terminal and the workflow names read from the checkout included.
func checkInitValues(o callers.Options) error {
	if v := o.MaxRunSpendUSD; v < initSpendLimit.Min || v > initSpendLimit.Max {
		return fail(ExitUsage, "--max-run-spend %s: want %s", strings.TrimPrefix(v.Format(money.Exact), "$"), initSpendLimit.Want)
	}
	var tiers []string
	for _, t := range o.Tiers {
		tiers = append(tiers, t.Name)
		tiers = append(tiers, t.GPUIDs...)
	}
	return checkNoExpression(map[string][]string{
		"--test-command": {o.TestCommand}, "--workflows": o.Workflows, "--suite": {o.Suite}, "--gpus": tiers,
		"--build-command": {o.BuildCommand}, "--build-image": {o.BuildImage}})
}

// checkNoExpression refuses the first value holding "${{", naming its flag.
func checkNoExpression(values map[string][]string) error {
	for _, flag := range []string{"--suite", "--workflows", "--gpus", "--test-command", "--build-command", "--build-image"} {
		for _, v := range values[flag] {
			if strings.Contains(v, expressionOpen) {
				return fail(ExitUsage, "%s %q: want a value without %q: init writes it into a workflow, where the runner would evaluate it as an expression", flag, v, expressionOpen)
			}
		}
	}
	return nil
}

// archiveTargetRE finds a make rule for the test archive (a target, not a
// variable assignment such as "archive := …").
var archiveTargetRE = regexp.MustCompile(`(?m)^(gpu-test-archive|archive)[ \t]*:([^=]|$)`)

// makefileArchiveTarget names the checkout's Makefile target that builds a
// test archive (gpu-test-archive, else archive), or "" when it has none.
func makefileArchiveTarget(dir string) string {
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} { // make's own order
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		found := ""
		for _, m := range archiveTargetRE.FindAllStringSubmatch(string(data), -1) {
			if found == "" || m[1] == "gpu-test-archive" {
				found = m[1]
			}
		}
		return found
	}
	return ""
}
