package history

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/org/runpod-gpu/pkg/cost"
	"github.com/org/runpod-gpu/pkg/money"
)

// Amount is a sum of estimated dollar amounts some of which may be unknown:
// the total is then unknown, and Known says how much it is at least.
type Amount struct {
	Known   money.Amount // the sum of the known amounts
	Unknown int          // how many amounts are unknown
	// UnknownJobs is how many of the unknown amounts are Serverless jobs'
	// rather than pods' (for the text only).
	UnknownJobs int
}

// Add adds one amount.
func (a *Amount) Add(m cost.Money) {
	if m.Known {
		a.Known += m.USD
	} else {
		a.Unknown++
	}
}

// AddJob adds one Serverless job's amount.
func (a *Amount) AddJob(m cost.Money) {
	a.Add(m)
	if !m.Known {
		a.UnknownJobs++
	}
}

// Plus adds another sum.
func (a *Amount) Plus(b Amount) {
	a.Known += b.Known
	a.Unknown += b.Unknown
	a.UnknownJobs += b.UnknownJobs
}

// Total is the sum, unknown when any amount is.
func (a Amount) Total() cost.Money {
	if a.Unknown > 0 {
		return cost.Money{}
	}
	return cost.KnownMoney(a.Known)
}

// String renders "$1.2345", or, with unknown amounts, the known part first:
// "$1.2345 known, 2 pods of unknown cost" (the total is at least that). The
// unknown amounts are pods' costs: every sum of this package adds pods.
func (a Amount) String() string {
	if a.Unknown == 0 {
		return a.Known.Format(money.Fine)
	}
	var parts []string
	if n := a.Unknown - a.UnknownJobs; n > 0 {
		parts = append(parts, plural(n, "pod", "pods"))
	}
	if a.UnknownJobs > 0 {
		parts = append(parts, plural(a.UnknownJobs, "Serverless job", "Serverless jobs"))
	}
	return fmt.Sprintf("%s known, %s of unknown cost", a.Known.Format(money.Fine), strings.Join(parts, " and "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// MarshalJSON writes {"usd": total or null, "knownUsd": n, "unknown": n}:
// a reader never sees a missing amount as zero.
func (a Amount) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		USD      cost.Money   `json:"usd"`
		KnownUSD money.Amount `json:"knownUsd"`
		Unknown  int          `json:"unknown"`
	}{a.Total(), a.Known, a.Unknown})
}

// Per is the amount shared among n (n > 0), to the nearest micro-dollar: an
// average, not a spend.
func (a Amount) Per(n int) Amount {
	k, half := money.Amount(n), money.Amount(n/2)
	return Amount{Known: (a.Known + half) / k, Unknown: a.Unknown}
}

// chartValue renders a known sum for a Mermaid chart: dollars, as a number.
func chartValue(v money.Amount) string { return strconv.FormatFloat(v.Dollars(), 'f', -1, 64) }
