package devcli

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/org/runpod-gpu/pkg/money"
	"github.com/org/runpod-gpu/pkg/ownership"
	"github.com/org/runpod-gpu/pkg/runpod"
)

// legacyNameRE is the CI lane's pod name, rgpu-<run>-<attempt>-c<N>
// (ownership.Tags.PodName), which the lane gave its pods before they
// carried ownership tags too.
var legacyNameRE = regexp.MustCompile(`^` + regexp.QuoteMeta(ownership.NamePrefix) + `-[1-9][0-9]*-[1-9][0-9]*-c[0-9]+$`)

// DefaultLegacyMinAge is the youngest a legacy pod may be to be deleted:
// the reaper's lifetime bound, past which no run of the lane still uses one.
const DefaultLegacyMinAge = 2 * time.Hour

// legacyPods are the live pods with the lane's name and no ownership tags at
// all, at least minAge old (by start, else creation), oldest first.
func legacyPods(pods []runpod.Pod, now time.Time, minAge time.Duration) []runpod.Pod {
	var out []runpod.Pod
	for _, p := range pods {
		if p.Status == runpod.PodTerminated || !legacyNameRE.MatchString(p.Name) || p.Env[ownership.EnvOwner] != "" {
			continue
		}
		if _, dev := ownership.Developer(p.Env); dev {
			continue
		}
		since, known := p.StartedAt.Get()
		if !known {
			since, known = p.CreatedAt.Get()
		}
		if !known || now.Sub(since) < minAge {
			continue // an age unknown is not proof of a legacy pod's age
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := out[i].CreatedAt.Get()
		b, _ := out[j].CreatedAt.Get()
		return a.Before(b)
	})
	return out
}

func (a *app) cleanupLegacyCmd() *cobra.Command {
	var execute bool
	var minAge time.Duration
	cmd := &cobra.Command{
		Use:   "cleanup-legacy [--execute] [--min-age 2h]",
		Short: "List (or with --execute delete) untagged pods named like the CI lane's, left from before ownership tags",
		Long: `cleanup-legacy finds pods the CI lane started before its pods carried
ownership tags: live pods named rgpu-<run>-<attempt>-c<N> with no owner tag
at all, at least --min-age old (default 2h, the reaper's lifetime bound, so
no running lane's pod qualifies). The reaper never touches an untagged pod,
so these bill until deleted by hand.

It is a dry run by default: it prints each pod, its age and its hourly price
and deletes nothing. Review the list (another project of the account could
name pods alike), then run it again with --execute to delete them, each
confirmed gone (exit 5 when a deletion is not confirmed).`,
		Example: `  runpod-gpu cleanup-legacy
  runpod-gpu cleanup-legacy --execute`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.cleanupLegacy(cmd.Context(), execute, minAge) },
	}
	cmd.Flags().BoolVar(&execute, "execute", false, "delete the pods listed (without it, a dry run)")
	cmd.Flags().DurationVar(&minAge, "min-age", DefaultLegacyMinAge, "list only pods at least this old (at least 1h)")
	return cmd
}

// cleanupLegacy lists the legacy pods and, with execute, deletes them.
func (a *app) cleanupLegacy(ctx context.Context, execute bool, minAge time.Duration) error {
	if minAge < time.Hour {
		return fail(ExitUsage, "--min-age %s: want at least 1h0m0s, so no pod of a lane still running is listed", minAge)
	}
	if err := a.connect(); err != nil {
		return err
	}
	pods, err := a.listPods(ctx)
	if err != nil {
		return err
	}
	now := a.env.Clock.Now()
	legacy := legacyPods(pods, now, minAge)
	if len(legacy) == 0 {
		fmt.Fprintf(a.env.Stdout, "no untagged pod named like the CI lane's (rgpu-<run>-<attempt>-c<N>) is older than %s\n", minAge)
		return nil
	}
	verb := "would delete (dry run; --execute deletes)"
	if execute {
		verb = "deleting"
	}
	var perHour money.Rate
	for _, p := range legacy {
		created, _ := p.CreatedAt.Get()
		age := now.Sub(created).Round(time.Minute)
		price := money.PerHour(float64(p.Cost))
		perHour += price
		fmt.Fprintf(a.env.Stdout, "%s %s (%s, %s, %s, up %s)\n", verb, p.ID, p.Name, p.Status, price.Format(money.Cents), age)
	}
	fmt.Fprintf(a.env.Stdout, "%d untagged legacy pod(s), %s together\n", len(legacy), perHour.Format(money.Cents))
	if !execute {
		return nil
	}
	unconfirmed := 0
	for _, p := range legacy {
		if _, err := a.deleter().Delete(ctx, p.ID); err != nil {
			unconfirmed++
			fmt.Fprintf(a.env.Stderr, "pod %s (%s): deletion not confirmed: %v\n", p.ID, p.Name, err)
			continue
		}
		fmt.Fprintf(a.env.Stdout, "deleted %s (%s)\n", p.ID, p.Name)
	}
	if unconfirmed > 0 {
		return fail(ExitUnconfirmed, "%d legacy pod(s) may still be billing: check runpod-gpu ls", unconfirmed)
	}
	return nil
}
