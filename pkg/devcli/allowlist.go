package devcli

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/org/runpod-gpu/pkg/config"
	"github.com/org/runpod-gpu/pkg/plan"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// modelArchitecture maps a GPU model token to its architecture, the tier a
// reviewed allowlist groups it in.
var modelArchitecture = map[string]string{
	"h100": "hopper", "h200": "hopper", "gh200": "hopper", "h800": "hopper",
	"b200": "blackwell", "b100": "blackwell", "b300": "blackwell", "gb200": "blackwell",
	"l4": "ada", "l40": "ada", "l40s": "ada",
	"a100": "ampere", "a40": "ampere", "a30": "ampere", "a10": "ampere", "a16": "ampere", "a2": "ampere",
	"a2000": "ampere", "a4000": "ampere", "a4500": "ampere", "a5000": "ampere", "a6000": "ampere",
	"t4": "turing", "v100": "volta", "p100": "pascal",
	"mi300x": "cdna3", "mi325x": "cdna3", "mi250x": "cdna2", "mi250": "cdna2",
}

var consumerModel = regexp.MustCompile(`^(\d{2})\d{2}$`) // 4090, 3090, 5090

// architecture names the tier of a GPU type: from its model token, else an
// "Ada"/"Blackwell" word (RTX 6000 Ada), else the serverless pool's prefix.
func architecture(g runpod.GPUType) string {
	tokens := strings.FieldsFunc(strings.ToLower(g.ID+" "+g.Name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for _, t := range tokens {
		if t == "ada" || t == "blackwell" {
			return t
		}
	}
	for _, t := range tokens {
		if arch, ok := modelArchitecture[t]; ok {
			return arch
		}
		if m := consumerModel.FindStringSubmatch(t); m != nil {
			switch m[1] {
			case "50":
				return "blackwell"
			case "40":
				return "ada"
			case "30":
				return "ampere"
			case "20":
				return "turing"
			}
		}
	}
	if prefix, _, ok := strings.Cut(strings.ToLower(g.Pool), "_"); ok && prefix != "" {
		return prefix
	}
	return "other"
}

// allowlistDoc is the block runpod-gpu.yml takes.
type allowlistDoc struct {
	GPUTiers []config.GPUTier `yaml:"gpu_tiers" json:"gpu_tiers"`
}

func (a *app) allowlistCmd() *cobra.Command {
	var names []string
	var minVRAM int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "allowlist --gpus NAME[,NAME…] [--min-vram GB]",
		Short: "Turn GPU names into a reviewed gpu_tiers block for .github/runpod-gpu.yml",
		Long: `allowlist resolves GPU names on whole tokens (as offers does) into the exact
RunPod GPU ids, drops types with less VRAM than --min-vram, groups them into
suggested tiers by architecture (cheapest tier first, cheapest type first)
and prints a gpu_tiers: block for .github/runpod-gpu.yml. The block is
validated by the same config code the CI lane loads it with.`,
		Example: `  runpod-gpu allowlist --gpus H100,L40S,RTX4090
  runpod-gpu allowlist --gpus A100-80GB,L40S --min-vram 40`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(names) == 0 {
				return fail(ExitUsage, "--gpus is required, e.g. --gpus H100,L40S,RTX4090")
			}
			if minVRAM < 0 || minVRAM > 1024 {
				return fail(ExitUsage, "--min-vram %d: want 0 to 1024 GB", minVRAM)
			}
			if err := a.connect(); err != nil {
				return err
			}
			cctx, cancel := a.bound(cmd.Context(), callTimeout)
			gpus, err := a.client.ListGPUTypes(cctx, runpod.GPUQuery{})
			cancel()
			if err != nil {
				return apiError("read the GPU catalog", err)
			}
			doc, dropped, err := buildAllowlist(names, gpus, minVRAM)
			if err != nil {
				return err
			}
			for _, d := range dropped {
				fmt.Fprintln(a.env.Stderr, d)
			}
			if asJSON {
				return writeJSON(a.env.Stdout, doc)
			}
			out, err := renderAllowlist(doc)
			if err != nil {
				return err
			}
			fmt.Fprint(a.env.Stdout, out)
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&names, "gpus", nil, "GPU names, comma-separated or repeated: H100,L40S,RTX4090")
	cmd.Flags().IntVar(&minVRAM, "min-vram", 0, "drop GPU types with less VRAM (GB); the lane's min_vram_gb applies too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tiers as JSON instead of YAML")
	return cmd
}

// buildAllowlist resolves names against the catalog and groups the ids into
// tiers. Every name must resolve; types under the VRAM floor are dropped
// with a note, and a name left with none is an error.
func buildAllowlist(names []string, gpus []runpod.GPUType, minVRAM int) (allowlistDoc, []string, error) {
	catalog := make([]plan.CatalogGPU, 0, len(gpus))
	byID := map[string]runpod.GPUType{}
	for _, g := range gpus {
		catalog = append(catalog, plan.CatalogGPU{ID: g.ID, Name: g.Name})
		byID[g.ID] = g
	}
	ids, dropped, err := matchAllowed(names, catalog, byID, minVRAM)
	if err != nil {
		return allowlistDoc{}, dropped, err
	}
	if len(ids) == 0 {
		return allowlistDoc{}, nil, fail(ExitUsage, "--gpus names no GPU")
	}
	return tiersByPrice(ids, byID), dropped, nil
}

// matchAllowed resolves each name to the catalog's ids with at least minVRAM
// GB, in order and without repeats, and notes the ids dropped for their VRAM.
// On an error, dropped is what the caller reports with it.
func matchAllowed(names []string, catalog []plan.CatalogGPU, byID map[string]runpod.GPUType, minVRAM int) (ids, dropped []string, _ error) {
	picked := map[string]bool{}
	for _, raw := range names {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		matched, err := plan.MatchGPUName(name, catalog)
		if err != nil {
			return nil, nil, withCode(ExitUsage, err)
		}
		kept := 0
		for _, id := range matched {
			if byID[id].Memory < minVRAM {
				dropped = append(dropped, fmt.Sprintf("dropped %q: %d GB VRAM is below --min-vram %d", id, byID[id].Memory, minVRAM))
				continue
			}
			kept++
			if !picked[id] {
				picked[id] = true
				ids = append(ids, id)
			}
		}
		if kept == 0 {
			return nil, dropped, fail(ExitUsage, "GPU name %q leaves no type with at least %d GB VRAM (matched %s)", name, minVRAM, quoted(matched))
		}
	}
	return ids, dropped, nil
}

// tiersByPrice groups ids into one tier per architecture, each tier's ids
// and the tiers themselves from the cheapest.
func tiersByPrice(ids []string, byID map[string]runpod.GPUType) allowlistDoc {
	price := func(id string) float64 {
		g := byID[id]
		if g.Secure && g.Price.Secure > 0 {
			return float64(g.Price.Secure)
		}
		return float64(g.Price.Community)
	}
	tiers := map[string][]string{}
	var order []string
	for _, id := range ids {
		arch := architecture(byID[id])
		if _, ok := tiers[arch]; !ok {
			order = append(order, arch)
		}
		tiers[arch] = append(tiers[arch], id)
	}
	cheapest := map[string]float64{}
	for arch, list := range tiers {
		sort.SliceStable(list, func(i, j int) bool { return price(list[i]) < price(list[j]) })
		cheapest[arch] = price(list[0])
	}
	sort.SliceStable(order, func(i, j int) bool { return cheapest[order[i]] < cheapest[order[j]] })
	var doc allowlistDoc
	for _, arch := range order {
		doc.GPUTiers = append(doc.GPUTiers, config.GPUTier{Name: arch, GPUIDs: tiers[arch]})
	}
	return doc
}

// renderAllowlist prints the block and proves it loads with the lane's own
// config code before anyone pastes it.
func renderAllowlist(doc allowlistDoc) (string, error) {
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", fail(ExitFailure, "render gpu_tiers: %v", err)
	}
	if _, err := config.Parse(out, "generated gpu_tiers"); err != nil {
		return "", fail(ExitFailure, "the generated gpu_tiers block does not validate: %v", err)
	}
	return "# Reviewed GPU allowlist for .github/runpod-gpu.yml (runpod-gpu allowlist)\n" + string(out), nil
}
