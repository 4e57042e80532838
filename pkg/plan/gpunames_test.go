package plan

import (
	"errors"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// nameCatalog is RunPod's catalog as far as names go, with the look-alikes
// whole-token matching must keep apart (L40 and L40S, three H100s, two 80 GB A100s).
var nameCatalog = []CatalogGPU{
	{ID: "NVIDIA RTX A4000", Name: "RTX A4000"},
	{ID: "NVIDIA GeForce RTX 4090", Name: "RTX 4090"},
	{ID: "NVIDIA GeForce RTX 3090", Name: "RTX 3090"},
	{ID: "NVIDIA RTX 6000 Ada Generation", Name: "RTX 6000 Ada"},
	{ID: "NVIDIA L4", Name: "L4"},
	{ID: "NVIDIA L40", Name: "L40"},
	{ID: "NVIDIA L40S", Name: "L40S"},
	{ID: "NVIDIA A40", Name: "A40"},
	{ID: "NVIDIA A100 80GB PCIe", Name: "A100 PCIe"},
	{ID: "NVIDIA A100-SXM4-80GB", Name: "A100 SXM"},
	{ID: "NVIDIA A100-SXM4-40GB", Name: "A100 SXM 40GB"},
	{ID: "NVIDIA H100 80GB HBM3", Name: "H100 SXM"},
	{ID: "NVIDIA H100 PCIe", Name: "H100 PCIe"},
	{ID: "NVIDIA H100 NVL", Name: "H100 NVL"},
	{ID: "NVIDIA H200", Name: "H200 SXM"},
}

func TestMatchGPUNameOnWholeTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"L40", []string{"NVIDIA L40"}},
		{"l40s", []string{"NVIDIA L40S"}},
		{"L4", []string{"NVIDIA L4"}},
		{"H100", []string{"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL"}},
		{"H100-SXM", []string{"NVIDIA H100 80GB HBM3"}},
		{"A100-80GB", []string{"NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-80GB"}},
		{"A100", []string{"NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB"}},
		{"RTX4090", []string{"NVIDIA GeForce RTX 4090"}},
		{"rtx 4090", []string{"NVIDIA GeForce RTX 4090"}},
		{"4090", []string{"NVIDIA GeForce RTX 4090"}},
		{"A4000", []string{"NVIDIA RTX A4000"}},
		{"RTX6000", []string{"NVIDIA RTX 6000 Ada Generation"}},
		{"H200", []string{"NVIDIA H200"}},
		{"A40", []string{"NVIDIA A40"}},
		{"nvidia h100 pcie", []string{"NVIDIA H100 PCIe"}},           // an exact id, any case
		{"NVIDIA H100 80GB HBM3", []string{"NVIDIA H100 80GB HBM3"}}, // exact: not the other H100s
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MatchGPUName(tc.name, nameCatalog)
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tc.want)
		})
	}
}

func TestMatchGPUNameErrorsListCandidates(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ambiguous bool
		want      []string // candidates the message must list
		wantNot   []string
	}{
		{name: "L40X", want: []string{"NVIDIA L40", "NVIDIA L40S", "NVIDIA L4"}, wantNot: []string{"NVIDIA H100 PCIe"}},
		{name: "H300", want: []string{"NVIDIA H100 PCIe", "NVIDIA H200"}, wantNot: []string{"NVIDIA L4"}},
		{name: "B200", want: []string{"NVIDIA L4", "NVIDIA H200"}}, // nothing near: the whole catalog
		{name: "RTX", ambiguous: true, want: []string{"NVIDIA RTX A4000", "NVIDIA GeForce RTX 4090"}, wantNot: []string{"NVIDIA L4"}},
		{name: "80GB", ambiguous: true, want: []string{"NVIDIA A100 80GB PCIe", "NVIDIA H100 80GB HBM3"}},
		{name: " -- ", want: []string{"NVIDIA L4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MatchGPUName(tc.name, nameCatalog)
			var ne *NameError
			assert.Assert(t, errors.As(err, &ne), "got %v", err)
			assert.Equal(t, ne.Ambiguous, tc.ambiguous)
			for _, id := range tc.want {
				assert.Check(t, is.Contains(err.Error(), `"`+id+`"`))
			}
			for _, id := range tc.wantNot {
				assert.Check(t, !contains(ne.Candidates, id), "%s listed for %q", id, tc.name)
			}
			assert.Check(t, is.Contains(err.Error(), tc.name))
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Any name a user types resolves or fails with a NameError; never a panic,
// and a match is always an id of the catalog.
func FuzzMatchGPUName(f *testing.F) {
	for _, seed := range []string{"L40", "H100", "A100-80GB", "RTX4090", "rtx 4090", "", "--", "NVIDIA H100 PCIe", "ÿ80GB", "a1a1a1"} {
		f.Add(seed)
	}
	known := map[string]bool{}
	for _, g := range nameCatalog {
		known[g.ID] = true
	}
	f.Fuzz(func(t *testing.T, name string) {
		ids, err := MatchGPUName(name, nameCatalog)
		var ne *NameError
		if err != nil {
			if !errors.As(err, &ne) {
				t.Fatalf("%q: %v is not a NameError", name, err)
			}
			return
		}
		if len(ids) == 0 {
			t.Fatalf("%q: no ids and no error", name)
		}
		for _, id := range ids {
			if !known[id] {
				t.Fatalf("%q matched %q, not a catalog id", name, id)
			}
		}
	})
}

// nameTokens splits at every character but a-z and 0-9, the ends of both
// ranges included.
func TestNameTokensKeepTheEndsOfEachRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"A100-SXM4-80GB", []string{"a100", "sxm4", "80gb"}},
		{"az09", []string{"az09"}},
		{"Z9 a0", []string{"z9", "a0"}},
		{"x/y_z", []string{"x", "y", "z"}},
	} {
		assert.DeepEqual(t, nameTokens(tc.in), tc.want)
	}
}

// Generic words are ambiguous only when they match several types: one match
// is the answer.
func TestMatchGPUNameGenericWordsWithOneMatch(t *testing.T) {
	got, err := MatchGPUName("RTX", []CatalogGPU{{ID: "NVIDIA RTX A4000", Name: "RTX A4000"}, {ID: "NVIDIA L4", Name: "L4"}})

	assert.NilError(t, err)
	assert.DeepEqual(t, got, []string{"NVIDIA RTX A4000"})
}

// family: leading letters when a digit follows them (0 and 9 included), the
// first two digits of a bare number, "" otherwise.
func TestFamilyEdges(t *testing.T) {
	for in, want := range map[string]string{
		"a0": "a", "h9": "h", "l40s": "l", "h100": "h",
		"50": "50", "4090": "40", "5": "", "9": "", "rtx": "", "": "",
	} {
		assert.Equal(t, family(in), want, "family(%q)", in)
	}
}
