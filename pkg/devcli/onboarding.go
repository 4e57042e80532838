package devcli

import "github.com/spf13/cobra"

// onboardingCmds are the commands that set a repository up for the lane:
// init writes its callers and configuration, doctor checks its set-up, app
// creates the GitHub App(s) from a manifest, rehearse plays its workflows on
// the embedded simulated cloud.
func (a *app) onboardingCmds() []*cobra.Command {
	return []*cobra.Command{a.initCmd(), a.doctorCmd(), a.appCreateCmd(), a.rehearseCmd()}
}
