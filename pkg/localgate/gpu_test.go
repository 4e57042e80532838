package localgate

import (
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

// nvidiaSMIBanner is the head of a real nvidia-smi 550 table.
const nvidiaSMIBanner = `Mon Mar  2 10:00:00 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
`

func TestParseGPUQuery(t *testing.T) {
	tests := []struct {
		name       string
		out        string
		wantName   string
		wantDriver string
		wantErr    string
	}{
		{name: "one GPU", out: "NVIDIA GeForce RTX 4090, 550.54.14\n", wantName: "NVIDIA GeForce RTX 4090", wantDriver: "550.54.14"},
		{name: "two identical", out: "NVIDIA H100 80GB HBM3, 550.54.14\nNVIDIA H100 80GB HBM3, 550.54.14\n", wantName: "2 x NVIDIA H100 80GB HBM3", wantDriver: "550.54.14"},
		{name: "mixed", out: "NVIDIA A100-SXM4-40GB, 535.1\r\nNVIDIA A10, 535.1\r\n", wantName: "NVIDIA A100-SXM4-40GB, NVIDIA A10", wantDriver: "535.1"},
		{name: "comma in name", out: "Tesla, rev 2, 470.42\n", wantName: "Tesla, rev 2", wantDriver: "470.42"},
		{name: "no GPU", out: "\n", wantErr: "nvidia-smi lists no GPU"},
		{name: "error text", out: "No devices were found\n", wantErr: `nvidia-smi line 1 "No devices were found": want "<name>, <driver version>"`},
		{name: "empty driver", out: "NVIDIA A10, \n", wantErr: "nvidia-smi line 1: evidence Driver is empty"},
		{name: "two drivers", out: "NVIDIA A10, 535.1\nNVIDIA A10, 550.2\n", wantErr: `nvidia-smi reports two drivers, "535.1" and "550.2"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			names, driver, err := ParseGPUQuery(tc.out)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, describeGPUs(names), tc.wantName)
			assert.Equal(t, driver, tc.wantDriver)
		})
	}
}

func TestParseCUDAVersion(t *testing.T) {
	got, err := ParseCUDAVersion(nvidiaSMIBanner)
	assert.NilError(t, err)
	assert.Equal(t, got, "12.4")

	got, err = ParseCUDAVersion("| NVIDIA-SMI 580.65.06   Driver Version: 580.65.06   CUDA Version: 13.0 |")
	assert.NilError(t, err)
	assert.Equal(t, got, "13.0")

	for _, banner := range []string{"", "CUDA Version: N/A", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."} {
		_, err := ParseCUDAVersion(banner)
		assert.ErrorContains(t, err, `nvidia-smi's banner has no "CUDA Version: <major>.<minor>"`, "banner %q", banner)
	}
}

func FuzzParseGPUQuery(f *testing.F) {
	f.Add("NVIDIA GeForce RTX 4090, 550.54.14\n")
	f.Add("a, 1\nb, 1\n")
	f.Add(",\n,")
	f.Fuzz(func(t *testing.T, out string) {
		names, driver, err := ParseGPUQuery(out)
		if err != nil {
			return
		}
		// Whatever parses is fit for an evidence line.
		if checkField(keyDriver, driver) != nil || len(names) == 0 {
			t.Fatalf("ParseGPUQuery(%q) = %q, %q", out, names, driver)
		}
		for _, n := range names {
			if err := checkField(keyGPU, n); err != nil {
				t.Fatalf("ParseGPUQuery(%q) name: %v", out, err)
			}
		}
	})
}

func FuzzParseCUDAVersion(f *testing.F) {
	f.Add(nvidiaSMIBanner)
	f.Add("CUDA Version:12.8")
	f.Fuzz(func(t *testing.T, banner string) {
		v, err := ParseCUDAVersion(banner)
		if err != nil {
			return
		}
		if !cudaRE.MatchString(v) || !strings.Contains(banner, v) {
			t.Fatalf("ParseCUDAVersion(%q) = %q", banner, v)
		}
	})
}
