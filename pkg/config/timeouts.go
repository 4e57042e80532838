package config

import (
	"fmt"
	"strconv"
	"time"
)

// The provision job's timeouts follow the configuration: a lane provisions
// its tiers one after another inside one job (each up to
// max_provision_attempts candidates, each bounded by its startup budget from
// its first POST, then deleted), so two tiers at the defaults can take far
// longer than one. Authorize outputs them (provision-minutes,
// provision-job-minutes) and gpu-lane.yml's provision jobs take their
// timeout-minutes from there; a configuration whose provisioning cannot fit
// GitHub's job limit is refused.

// GitHubJobLimitMinutes is GitHub's limit on one job's run on a hosted runner.
const GitHubJobLimitMinutes = 360

// Allowances of the provision step beside the candidates' startup budgets.
const (
	// ProvisionCandidateOverhead is what one candidate may take besides its
	// startup budget: its deletion (up to 3 minutes), its runner config, the
	// PR read and the budget check before its create.
	ProvisionCandidateOverhead = 4 * time.Minute
	// ProvisionStepMargin is what a provisioning takes besides its
	// candidates: the image digest, the catalog, the reuse lookup, the last
	// look for pods of uncertain creates.
	ProvisionStepMargin = 10 * time.Minute
	// ProvisionJobMarginMinutes is the job's other steps (checkout, the host
	// reputation, the retention record) and its set-up.
	ProvisionJobMarginMinutes = 10
)

// ProvisionTiers is how many tiers one provisioning tests in turn:
// matrix_tiers, or one.
func (c *Config) ProvisionTiers() int { return max(len(c.MatrixTiers), 1) }

// ProvisionTierBudget is what provisioning one tier may take:
// max_provision_attempts × (startup_timeout_seconds +
// ProvisionCandidateOverhead). A pause RunPod asks for that outlasts one
// candidate's budget is waited out within it (provision's create).
func (c *Config) ProvisionTierBudget() time.Duration {
	return time.Duration(max(c.MaxProvisionAttempts, 1)) * (c.StartupTimeout() + ProvisionCandidateOverhead)
}

// ProvisionMinutes are the provision step's and job's timeouts: every tier
// in turn, each up to max_provision_attempts × (startup_timeout_seconds +
// ProvisionCandidateOverhead), plus ProvisionStepMargin; the job adds
// ProvisionJobMarginMinutes.
func (c *Config) ProvisionMinutes() (step, job int) {
	d := time.Duration(c.ProvisionTiers())*c.ProvisionTierBudget() + ProvisionStepMargin
	step = int((d + time.Minute - 1) / time.Minute)
	return step, step + ProvisionJobMarginMinutes
}

// provisioning refuses a configuration whose provision job cannot fit
// GitHub's job limit (checked once the keys it is made of are valid).
func (v *validator) provisioning(c *Config) {
	if len(v.problems) > 0 {
		return
	}
	_, job := c.ProvisionMinutes()
	if job <= GitHubJobLimitMinutes {
		return
	}
	per := c.ProvisionTiers() * c.MaxProvisionAttempts
	room := time.Duration(GitHubJobLimitMinutes-ProvisionJobMarginMinutes)*time.Minute - ProvisionStepMargin
	most := int((room/time.Duration(per) - ProvisionCandidateOverhead) / time.Second)
	v.add("startup_timeout_seconds", strconv.Itoa(c.StartupTimeoutSeconds), fmt.Sprintf(
		"at most %d: the provision job tests %d tier(s) × max_provision_attempts %d in turn, each candidate up to startup_timeout_seconds + %s, "+
			"plus %s, and must fit GitHub's %d-minute job limit (it would take up to %d minutes); lower it, max_provision_attempts or matrix_tiers",
		max(most, 0), c.ProvisionTiers(), c.MaxProvisionAttempts, ProvisionCandidateOverhead, ProvisionStepMargin+ProvisionJobMarginMinutes*time.Minute,
		GitHubJobLimitMinutes, job))
}
