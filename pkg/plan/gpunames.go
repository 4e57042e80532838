package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/org/runpod-gpu/pkg/lazyre"
)

// CatalogGPU is what name matching needs to know about one catalog GPU type.
type CatalogGPU struct {
	ID   string // exact RunPod GPU id, e.g. "NVIDIA GeForce RTX 4090"
	Name string // display name, e.g. "RTX 4090"
}

// NameError is an unknown or ambiguous GPU name; Candidates are the exact
// GPU ids the user may have meant, so the message can list them.
type NameError struct {
	Name       string
	Ambiguous  bool
	Candidates []string
}

func (e *NameError) Error() string {
	if e.Ambiguous {
		return fmt.Sprintf("GPU name %q is ambiguous: it matches %s; name the model (e.g. H100, RTX4090, A100-80GB) or pass an exact id with --instance-type",
			e.Name, quoteList(e.Candidates))
	}
	if len(e.Candidates) == 0 {
		return fmt.Sprintf("GPU name %q matches no GPU type in the RunPod catalog", e.Name)
	}
	return fmt.Sprintf("GPU name %q matches no GPU type in the RunPod catalog; known types: %s", e.Name, quoteList(e.Candidates))
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// genericTokens name a vendor, a product line, a form factor or a memory
// size, never one GPU model: a name made only of them ("RTX", "80GB",
// "NVIDIA PCIe") is ambiguous when it matches more than one type.
var genericTokens = map[string]bool{
	"nvidia": true, "geforce": true, "rtx": true, "tesla": true, "quadro": true, "amd": true,
	"radeon": true, "instinct": true, "pcie": true, "sxm": true, "sxm4": true, "sxm5": true,
	"nvl": true, "hbm3": true, "hbm3e": true, "ada": true, "generation": true, "pro": true,
	"blackwell": true, "workstation": true, "server": true, "edition": true,
}

var memoryToken = lazyre.Regexp{Pattern: `^\d+gb$`}

// nameTokens splits a GPU name into lower-case alphanumeric tokens at every
// other character: "A100-SXM4-80GB" → a100 sxm4 80gb.
func nameTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

// tokensMatch reports whether every query token equals one token of the
// candidate, or several consecutive ones written together ("rtx4090" is
// "rtx" "4090"), in order. Tokens are never matched by prefix, so "l40"
// does not match "l40s".
func tokensMatch(query, cand []string) bool {
	if len(query) == 0 {
		return true
	}
	for start := range cand {
		joined := ""
		for end := start; end < len(cand); end++ {
			joined += cand[end]
			if !strings.HasPrefix(query[0], joined) {
				break
			}
			if joined == query[0] && tokensMatch(query[1:], cand[end+1:]) {
				return true
			}
		}
	}
	return false
}

// MatchGPUName resolves a user's GPU name to exact catalog ids on whole
// tokens, in catalog order: "H100" matches every H100 variant (PCIe, SXM,
// NVL), "A100-80GB" both 80 GB A100s, "RTX4090" the GeForce RTX 4090, and
// "L40" never "L40S". An exact id (any case) matches only itself. A name
// that matches nothing, or only generic words that match several models
// ("RTX"), is a *NameError listing the candidates.
func MatchGPUName(name string, catalog []CatalogGPU) ([]string, error) {
	trimmed := strings.TrimSpace(name)
	for _, g := range catalog {
		if strings.EqualFold(g.ID, trimmed) {
			return []string{g.ID}, nil
		}
	}
	query := nameTokens(trimmed)
	if len(query) == 0 {
		return nil, &NameError{Name: name, Candidates: catalogIDs(catalog)}
	}
	var ids []string
	for _, g := range catalog {
		if tokensMatch(query, nameTokens(g.ID)) || (g.Name != "" && tokensMatch(query, nameTokens(g.Name))) {
			ids = append(ids, g.ID)
		}
	}
	if len(ids) == 0 {
		return nil, &NameError{Name: name, Candidates: near(query, catalog)}
	}
	if len(ids) > 1 && allGeneric(query) {
		return nil, &NameError{Name: name, Ambiguous: true, Candidates: ids}
	}
	return ids, nil
}

func allGeneric(tokens []string) bool {
	for _, t := range tokens {
		if !genericTokens[t] && !memoryToken.MatchString(t) {
			return false
		}
	}
	return true
}

// near lists the catalog ids with a model token of the query's family: the
// same leading letters ("L40X" → L4, L40, L40S; "H300" → H100, H200), or for
// a bare number the same first two digits; the whole catalog when none is near.
func near(query []string, catalog []CatalogGPU) []string {
	var out []string
	for _, g := range catalog {
		found := false
		for _, ct := range append(nameTokens(g.ID), nameTokens(g.Name)...) {
			for _, q := range query {
				if !genericTokens[q] && !genericTokens[ct] && family(q) != "" && family(q) == family(ct) {
					found = true
				}
			}
		}
		if found {
			out = append(out, g.ID)
		}
	}
	if len(out) == 0 {
		return catalogIDs(catalog)
	}
	return out
}

// family is a model token's leading letters when digits follow them, or
// the first two digits of a bare number; "" for anything else.
func family(token string) string {
	rest := strings.TrimLeft(token, "abcdefghijklmnopqrstuvwxyz")
	letters := token[:len(token)-len(rest)]
	switch {
	case rest == "" || rest[0] < '0' || rest[0] > '9':
		return ""
	case letters != "":
		return letters
	case len(rest) >= 2:
		return rest[:2]
	}
	return ""
}

func catalogIDs(catalog []CatalogGPU) []string {
	out := make([]string, 0, len(catalog))
	for _, g := range catalog {
		out = append(out, g.ID)
	}
	sort.Strings(out)
	return out
}
