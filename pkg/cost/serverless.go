package cost

import (
	"fmt"
	"math"
	"time"

	"github.com/org/runpod-gpu/pkg/money"
)

// ServerlessSpend is what one attempt of the Serverless lane cost, as far as
// its job's timing shows: RunPod bills a worker from its start (cold start
// included, inside the job's delay) to its stop (the idle timeout after the
// job), rounded up to the second. With no job, or a job whose timing is
// unknown, the spend is unknown (never zero): a worker may have started all
// the same. Reserved is the budget ledger's bound for the attempt.
type ServerlessSpend struct {
	Attempt string `json:"attempt"`
	// EndpointID is the endpoint RunPod bills the attempt's workers to (the
	// cost history matches its bill by it); "" when none was created.
	EndpointID string `json:"endpointId,omitempty"`
	JobID      string `json:"jobId"`
	JobStatus  string `json:"jobStatus"`
	GPU        string `json:"gpu"`  // the GPU type asked for, e.g. NVIDIA RTX A4000
	Pool       string `json:"pool"` // the Serverless pool, e.g. AMPERE_16
	// PricePerHour is the hourly price the estimate uses: the pool's listed
	// Serverless price, else the lane's ceiling.
	PricePerHour  money.Rate       `json:"pricePerHour"`
	WorkerSeconds int64            `json:"workerSeconds"` // 0 with Dollars unknown
	Dollars       Money            `json:"dollars"`
	ReservedCents money.WholeCents `json:"reservedCents"`    // the attempt's ledger reservations
	LedgerCents   money.WholeCents `json:"ledgerTotalCents"` // the repository ledger's total after the attempt
}

// EstimateServerless prices a worker that waited delay (the cold start is
// part of it), ran the job for execution and idled for idle before it stopped.
func EstimateServerless(delay, execution, idle time.Duration, price money.Rate) (int64, Money) {
	if delay < 0 || execution <= 0 || price <= 0 {
		return 0, Money{}
	}
	seconds := int64(math.Ceil((delay + execution + idle).Seconds()))
	return seconds, KnownSeconds(seconds).At(KnownPrice(price, ""))
}

// String is one line for logs and summaries.
func (s ServerlessSpend) String() string {
	return fmt.Sprintf("Serverless attempt %s: job %s %s on %s, %d worker seconds at %s = %s (reserved %s)",
		s.Attempt, s.JobID, s.JobStatus, s.GPU, s.WorkerSeconds, s.PricePerHour.Format(money.Cents), s.Dollars, s.ReservedCents.Amount())
}
