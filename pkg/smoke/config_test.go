package smoke_test

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/smoke"
)

const sha = "3372573277d00c1ebbbe87866dd71233e2b3fb72e57e917dfbe730131ccf59f7"

func TestParseConfig(t *testing.T) {
	v := func(major, minor int) smoke.Version { return smoke.Version{Major: major, Minor: minor} }
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    smoke.Config
		wantErr string
	}{
		{
			name: "defaults",
			want: smoke.Config{MinCUDA: v(12, 6), Tiers: smoke.DefaultTiers, MinVRAMBytes: 8e9, NVRTC: map[smoke.TierName]smoke.NVRTCPin{}},
		},
		{
			name: "environment",
			env: map[string]string{
				"SMOKE_MIN_CUDA": "12.4", "SMOKE_FULL_TIER": "12.9", "SMOKE_BASELINE_TIER": "12.7",
				"SMOKE_MIN_VRAM_GB": "23.5", "SMOKE_REPORT": "/tmp/r.json", "SMOKE_WORK_DIR": "/scratch",
				"SMOKE_NVRTC_URL_FULL": "https://example.test/cuda-nvrtc-12-9.deb", "SMOKE_NVRTC_SHA256_FULL": sha,
			},
			want: smoke.Config{
				MinCUDA: v(12, 4), Tiers: smoke.Tiers{Full: v(12, 9), Baseline: v(12, 7)}, MinVRAMBytes: 23.5e9,
				ReportPath: "/tmp/r.json", WorkDir: "/scratch",
				NVRTC: map[smoke.TierName]smoke.NVRTCPin{smoke.TierFull: {URL: "https://example.test/cuda-nvrtc-12-9.deb", SHA256: sha}},
			},
		},
		{
			name: "flags override the environment",
			args: []string{"--min-cuda", "12.8", "--min-vram-gb=0", "--nvrtc-url-baseline", "http://h/p.tar.gz", "--nvrtc-sha256-baseline", strings.ToUpper(sha)},
			env:  map[string]string{"SMOKE_MIN_CUDA": "12.4", "SMOKE_MIN_VRAM_GB": "80"},
			want: smoke.Config{MinCUDA: v(12, 8), Tiers: smoke.DefaultTiers,
				NVRTC: map[smoke.TierName]smoke.NVRTCPin{smoke.TierBaseline: {URL: "http://h/p.tar.gz", SHA256: strings.ToUpper(sha)}}},
		},
		{name: "bad floor", args: []string{"--min-cuda", "twelve"},
			wantErr: `--min-cuda (SMOKE_MIN_CUDA) "twelve": want a CUDA version MAJOR.MINOR such as 12.8`},
		{name: "bad tier from env", env: map[string]string{"SMOKE_FULL_TIER": "12.8.1"},
			wantErr: `--full-tier (SMOKE_FULL_TIER) "12.8.1": want a CUDA version`},
		{name: "tiers out of order", args: []string{"--full-tier", "12.6", "--baseline-tier", "12.8"},
			wantErr: `--full-tier (SMOKE_FULL_TIER) "12.6": must not be older than the baseline tier 12.8`},
		{name: "tier without PTX mapping", args: []string{"--full-tier", "14.0"},
			wantErr: `--full-tier (SMOKE_FULL_TIER) "14.0": CUDA 14.0 has no known PTX ISA version`},
		{name: "negative VRAM", args: []string{"--min-vram-gb", "-1"},
			wantErr: `--min-vram-gb (SMOKE_MIN_VRAM_GB) "-1": want a non-negative number of GB`},
		{name: "URL without checksum", args: []string{"--nvrtc-url-full", "https://h/p.deb"},
			wantErr: `--nvrtc-url-full (SMOKE_NVRTC_URL_FULL) "https://h/p.deb": must be given together with --nvrtc-sha256-full`},
		{name: "checksum without URL", args: []string{"--nvrtc-sha256-full", sha},
			wantErr: `--nvrtc-url-full (SMOKE_NVRTC_URL_FULL) "": must be given together with --nvrtc-sha256-full`},
		{name: "short checksum", args: []string{"--nvrtc-url-full", "https://h/p.deb", "--nvrtc-sha256-full", "abc"},
			wantErr: `--nvrtc-sha256-full (SMOKE_NVRTC_SHA256_FULL) "abc": want 64 hexadecimal digits`},
		{name: "not http", args: []string{"--nvrtc-url-full", "file:///p.deb", "--nvrtc-sha256-full", sha},
			wantErr: `--nvrtc-url-full (SMOKE_NVRTC_URL_FULL) "file:///p.deb": want an http or https URL`},
		{name: "credentials in URL are refused and redacted", args: []string{"--nvrtc-url-full", "https://u:secret@h/p.deb", "--nvrtc-sha256-full", sha},
			wantErr: `--nvrtc-url-full (SMOKE_NVRTC_URL_FULL) "https://u:xxxxx@h/p.deb": must not carry credentials`},
		{name: "unknown package type", args: []string{"--nvrtc-url-full", "https://h/p.rpm", "--nvrtc-sha256-full", sha},
			wantErr: `package "p.rpm": want a .deb, .tar, .tar.gz or .tgz file`},
		{name: "unknown flag", args: []string{"--min-vram", "8"}, wantErr: "flag provided but not defined: -min-vram"},
		{name: "stray argument", args: []string{"12.8"}, wantErr: `unexpected argument "12.8"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := smoke.ParseConfig(tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				assert.Assert(t, !strings.Contains(err.Error(), "secret"), "credentials leaked into %q", err)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tt.want)
		})
	}
}

func TestParseConfigHelp(t *testing.T) {
	_, err := smoke.ParseConfig([]string{"--help"}, func(string) string { return "" })
	assert.Assert(t, errors.Is(err, flag.ErrHelp))
}

func TestParseConfigErrorsAreTyped(t *testing.T) {
	_, err := smoke.ParseConfig([]string{"--min-cuda", "x"}, func(string) string { return "" })
	var cerr *smoke.ConfigError
	assert.Assert(t, errors.As(err, &cerr))
	assert.Equal(t, cerr.Flag, "min-cuda")
	assert.Equal(t, cerr.Env, "SMOKE_MIN_CUDA")
}

// FuzzParseConfig feeds arbitrary environment values: no panic, and an accepted configuration
// keeps its invariants.
func FuzzParseConfig(f *testing.F) {
	f.Add("12.6", "12.8", "12.6", "8", "https://h/p.deb", sha)
	f.Add("x", "13.0", "12.9", "1e400", "http://[::1]:80/a.tgz", "zz")
	f.Fuzz(func(t *testing.T, minCUDA, full, baseline, vram, url, digest string) {
		env := map[string]string{
			"SMOKE_MIN_CUDA": minCUDA, "SMOKE_FULL_TIER": full, "SMOKE_BASELINE_TIER": baseline,
			"SMOKE_MIN_VRAM_GB": vram, "SMOKE_NVRTC_URL_FULL": url, "SMOKE_NVRTC_SHA256_FULL": digest,
		}
		cfg, err := smoke.ParseConfig(nil, func(k string) string { return env[k] })
		if err != nil {
			return
		}
		assert.Assert(t, cfg.Tiers.Full.AtLeast(cfg.Tiers.Baseline))
		for _, v := range []smoke.Version{cfg.Tiers.Full, cfg.Tiers.Baseline} {
			_, err := smoke.PTXISAFor(v)
			assert.NilError(t, err)
		}
		if pin, ok := cfg.NVRTC[smoke.TierFull]; ok {
			_, err := smoke.InstallerFor(pin.URL)
			assert.NilError(t, err)
			assert.Equal(t, len(pin.SHA256), 64)
		}
	})
}
