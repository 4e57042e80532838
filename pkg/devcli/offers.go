package devcli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/plan"
)

// offerJSON is one offer as --json prints it.
type offerJSON struct {
	InstanceType string `json:"instance_type"`
	plan.DCOffer
}

func (a *app) offersCmd() *cobra.Command {
	var f offerFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "offers --gpus NAME[:COUNT] [--region R]… [--zone Z]… [--cloud secure|community|all]",
		Short: "List where a GPU is in stock now, cheapest first",
		Long: `offers reads RunPod's live catalog (once per cloud tier) and prints one offer
per data center that has the GPU in stock: the instance type
"<GPU id> x<count> <tier>", the region (continent), the zone (data-center
id, which --zone pins) and the hourly price. Secure and community offers
compete on price, cheapest first.

GPU names match on whole tokens: H100 matches every H100 variant (PCIe, SXM,
NVL), A100-80GB both 80 GB A100s, RTX4090 the GeForce RTX 4090, and L40 never
L40S. --instance-type takes an exact RunPod GPU id instead.

Exits 3 when nothing is in stock.`,
		Example: `  runpod-gpu offers --gpus RTX4090:1
  runpod-gpu offers --gpus H100:8 --region north_america --cloud secure
  runpod-gpu offers --gpus A100-80GB --region US --region CA --json
  runpod-gpu offers --instance-type "NVIDIA H100 80GB HBM3" --zone US-KS-2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := f.parse(cmd)
			if err != nil {
				return err
			}
			if err := a.connect(); err != nil {
				return err
			}
			set, err := a.readOffers(cmd.Context(), q)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(a.env.Stdout, offersJSON(set.offers)); err != nil {
					return err
				}
			} else if len(set.offers) > 0 {
				printOffers(a.env.Stdout, set.offers)
			}
			if len(set.offers) == 0 {
				return errNoOffer(q, set)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the offers as a JSON array")
	return cmd
}

func offersJSON(offers []plan.DCOffer) []offerJSON {
	out := make([]offerJSON, 0, len(offers))
	for _, o := range offers {
		out = append(out, offerJSON{InstanceType: o.InstanceType(), DCOffer: o})
	}
	return out
}

func printOffers(w io.Writer, offers []plan.DCOffer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INSTANCE TYPE\tREGION\tZONE\t$/HOUR\tSTOCK")
	for _, o := range offers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", terminalSafe(o.InstanceType()), terminalSafe(orDash(o.Region)), terminalSafe(o.DataCenterID),
			strings.TrimPrefix(o.PricePerHour.Hourly().Format(money.Cents), "$"), terminalSafe(strings.ToLower(o.Availability)))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeJSON prints v indented, one document per command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fail(ExitFailure, "write JSON: %v", err)
	}
	return nil
}
