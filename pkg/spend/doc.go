// Package spend is the one room where GPU CI decides whether money may be
// spent: every worst case and every refusal is computed here, in
// money.Amount, and the lanes only ask.
//
//   - A candidate's worst case (Candidate), a plan's and a lane's (OfPlan,
//     Lane), and a developer pod's (the CLI's repro asks Candidate).
//   - One provision run's ceiling, max_run_spend_usd (Run): what rejected
//     and unconfirmed pods may have cost (RejectedBound, UnconfirmedBound),
//     plus the lane's other pods, plus the next candidate.
//   - The daily and monthly budget shared by both lanes (Limits, Create,
//     Usage, DecideBudget): pkg/budget reads billing and the live pods and
//     asks DecideBudget; OvershootBound is what a pod the re-check refuses
//     may bill.
//   - The Serverless ledger's caps (LedgerCaps, StageReservation):
//     pkg/serverless reads and writes the ledger file and asks Admit.
//
// Reading what was spent (billing, the ledger file, the spend record) stays
// with the packages that read it. The messages are the product's: their
// wording is pinned by the lanes' golden files.
package spend
