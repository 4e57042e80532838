package lanegen

// asFirst notes on a re-run job's name why it keeps its first job's name.
const asFirst = " # as the first: the cost history trusts the lane's jobs by name"

// rerun is one host-fault re-run job of Lane: its first job again, fed by the
// re-run's jobs.
type rerun struct {
	from, id string
	lead     []string // the comment lines between its key and its name; nil keeps the first job's
	nameNote string   // a comment on its name line
	// wiring is its job-level needs and if; nil keeps the first job's, with
	// provision read as provision-again (readsRerun).
	wiring     []string
	readsRerun bool // it reads provision-again where the first job reads provision
	// inputs are added to the with: of its step id step: the lane so far.
	step   string
	inputs []string
}

// reruns are the lane's host-fault re-run jobs, in the order they are written.
var reruns = []rerun{
	{
		from: "provision", id: "provision-again",
		lead: []string{
			"    # Host or code: a pod lost to its host while its GPU job ran (the watchdog's host-faults) is",
			"    # provisioned once more, on another host, inside max_run_spend_usd with every pod before it.",
			"    # A test failure is never re-run; a pod of this re-run lost again is not re-run a second time.",
		},
		nameNote: asFirst,
		wiring: []string{
			"    needs: [authorize, reputation, provision, watchdog]",
			"    if: ${{ !cancelled() && needs.watchdog.outputs.host-faults != '' && needs.watchdog.outputs.host-faults != '[]' }}",
		},
		step: "provision",
		inputs: []string{
			"          tiers: ${{ needs.provision.outputs.tiers }} # the lane so far: the re-run adds to it",
			"          host-faults: ${{ needs.watchdog.outputs.host-faults }}",
		},
	},
	{from: "watchdog", id: "watchdog-again", nameNote: asFirst, readsRerun: true},
	{
		from: "gpu-tests", id: "gpu-tests-again",
		lead:       []string{"    # The host-fault re-run: the same job on the re-run's pods, named as the watchdog knows it."},
		readsRerun: true,
	},
}

// apply writes the re-run job from its first job.
func (r rerun) apply(first job) (job, error) {
	j := first
	j.id, j.above = r.id, nil
	if r.readsRerun {
		j = j.rename("provision", "provision-again")
	}
	if r.lead != nil {
		j = j.withLead(r.lead)
	}
	j, err := j.withName(r.nameNote)
	if err != nil {
		return j, err
	}
	if r.wiring != nil {
		j = j.withWiring(r.wiring)
	}
	if r.inputs != nil {
		return j.withInputs(r.step, r.inputs)
	}
	return j, nil
}
