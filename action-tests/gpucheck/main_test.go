package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"

	"github.com/org/runpod-gpu/pkg/smoke"
	"github.com/org/runpod-gpu/pkg/smoke/smoketest"
)

var lineRE = regexp.MustCompile(`^GPU-CHECK driver=(\S+) tier=(\S+) cc=(\S+) vram_gb=(\S+) seconds=(\S+) result=(PASS|FAIL)$`)

// The script, run as on a GPU machine but with the driver stand-in in place
// of NVIDIA's libcuda.so.1, builds the real proof and prints one line.
func TestScriptAgainstStandInDriver(t *testing.T) {
	libDir := smoketest.RequireStandInDriver(t)
	tests := []struct {
		name     string
		driver   smoketest.DriverConfig
		wantExit int
		want     []string // driver, tier, cc, vram_gb, result
	}{
		{
			name:   "healthy full tier",
			driver: smoketest.DriverConfig{DriverVersion: 12080, ComputeCapability: "9.0", VRAMMiB: 143771},
			want:   []string{"12.8", "full", "9.0", "150.8", "PASS"},
		},
		{
			name:     "driver refuses the tier's PTX",
			driver:   smoketest.DriverConfig{DriverVersion: 12080, MaxPTXISA: "8.5"},
			wantExit: 1,
			want:     []string{"12.8", "full", "8.9", "25.8", "FAIL"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("bash", "run.sh")
			cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
				return strings.HasPrefix(kv, "SIM_CUDA_") || strings.HasPrefix(kv, "LD_LIBRARY_PATH=")
			}), append(tt.driver.Env(), "LD_LIBRARY_PATH="+libDir)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()

			exit := 0
			if ee, ok := err.(*exec.ExitError); ok {
				exit = ee.ExitCode()
			} else {
				assert.NilError(t, err)
			}
			assert.Equal(t, exit, tt.wantExit, stderr.String())
			lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
			assert.Assert(t, is.Len(lines, 1), "one result line on stdout; stderr:\n%s", stderr.String())
			m := lineRE.FindStringSubmatch(lines[0])
			assert.Assert(t, m != nil, "line %q has the wrong shape", lines[0])
			assert.Check(t, is.DeepEqual([]string{m[1], m[2], m[3], m[4], m[6]}, tt.want))
			assert.Check(t, regexp.MustCompile(`^\d+\.\d\d$`).MatchString(m[5]), "seconds=%s", m[5])
			assert.Check(t, is.Contains(stderr.String(), "SMOKE "), "the proof's lines go to stderr")
		})
	}
}

func TestLine(t *testing.T) {
	full := smoke.Report{
		Result: "pass", DriverVersion: smoke.Version{Major: 12, Minor: 9}, Tier: smoke.TierFull, DurationMS: 1234.5,
		Device: &smoke.DeviceReport{ComputeCapability: smoke.ComputeCapability{Major: 9, Minor: 0}, VRAMBytes: 150_754_820_096},
	}
	tests := []struct {
		name   string
		report smoke.Report
		pass   bool
		want   string
	}{
		{name: "pass", report: full, pass: true, want: "GPU-CHECK driver=12.9 tier=full cc=9.0 vram_gb=150.8 seconds=1.23 result=PASS"},
		{name: "proof exit overrides the report", report: full, pass: false, want: "GPU-CHECK driver=12.9 tier=full cc=9.0 vram_gb=150.8 seconds=1.23 result=FAIL"},
		{name: "no report", report: smoke.Report{}, want: "GPU-CHECK driver=- tier=- cc=- vram_gb=- seconds=- result=FAIL"},
		{
			name:   "failed before the device",
			report: smoke.Report{Result: "fail", DriverVersion: smoke.Version{Major: 12, Minor: 4}, DurationMS: 3},
			want:   "GPU-CHECK driver=12.4 tier=- cc=- vram_gb=- seconds=0.00 result=FAIL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, Line(tt.report, tt.pass), tt.want)
		})
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	passing := filepath.Join(dir, "pass.json")
	assert.NilError(t, os.WriteFile(passing, []byte(`{"result":"pass","driver_version":"12.8","tier":"full",
		"device":{"compute_capability":"8.9","vram_bytes":25757220864},"steps":[],"duration_ms":19}`), 0o644))
	tests := []struct {
		name     string
		args     []string
		wantOut  string
		wantPass bool
		wantErr  string
	}{
		{name: "pass", args: []string{"-report", passing}, wantPass: true,
			wantOut: "GPU-CHECK driver=12.8 tier=full cc=8.9 vram_gb=25.8 seconds=0.02 result=PASS\n"},
		{name: "proof exited 1", args: []string{"-report", passing, "-exit-code", "1"},
			wantOut: "GPU-CHECK driver=12.8 tier=full cc=8.9 vram_gb=25.8 seconds=0.02 result=FAIL\n"},
		{name: "missing report fails the check", args: []string{"-report", filepath.Join(dir, "absent.json")},
			wantOut: "GPU-CHECK driver=- tier=- cc=- vram_gb=- seconds=- result=FAIL\n"},
		{name: "no -report", args: nil, wantErr: "-report is required"},
		{name: "bad exit code", args: []string{"-report", passing, "-exit-code", "x"}, wantErr: `invalid value "x" for flag -exit-code`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			pass, err := run(tt.args, &stdout, &stderr)
			if tt.wantErr != "" {
				assert.Check(t, is.ErrorContains(err, tt.wantErr))
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.Equal(stdout.String(), tt.wantOut))
			assert.Check(t, is.Equal(pass, tt.wantPass))
		})
	}
}

func TestScriptPassesShellcheck(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("skipping: shellcheck not found on PATH")
	}
	out, err := exec.Command(shellcheck, "run.sh").CombinedOutput()
	assert.NilError(t, err, string(out))
}

// FuzzRun feeds arbitrary report files: the result is always one well-formed
// line, PASS only for a report that says so.
func FuzzRun(f *testing.F) {
	f.Add([]byte(`{"result":"pass","driver_version":"12.8","tier":"full","device":{"compute_capability":"8.9","vram_bytes":1},"duration_ms":1}`))
	f.Add([]byte(`{"result":"fail","driver_version":"twelve"}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(`{"result":"pass","tier":"full tier=x"}`))
	f.Fuzz(func(t *testing.T, report []byte) {
		path := filepath.Join(t.TempDir(), "report.json")
		assert.NilError(t, os.WriteFile(path, report, 0o644))
		var stdout bytes.Buffer
		pass, err := run([]string{"-report", path}, &stdout, &bytes.Buffer{})
		assert.NilError(t, err)
		line := strings.TrimSuffix(stdout.String(), "\n")
		assert.Assert(t, lineRE.MatchString(line), "line %q", line)
		assert.Equal(t, strings.HasSuffix(line, "result=PASS"), pass)
	})
}
