// Package money is GPU CI's one amount type: every price, spend, bound and
// limit in product code is an Amount (US dollars) or a Rate (US dollars per
// hour), added and compared exactly.
//
// The unit is the micro-dollar, held in an int64. Why: sums and comparisons
// that decide a spend (a ceiling, a budget, a ledger cap) must be exact, which
// float64 dollars are not (0.1+0.2 != 0.3); cents, the Serverless ledger's old
// unit, are too coarse for a per-second price ($0.34/h is $0.0000944 a
// second). A micro-dollar is below every price RunPod shows (four decimals
// per hour) and an int64 of them holds nine trillion dollars.
//
// The one rounding rule: a Rate over a duration (Rate.For) rounds up to the
// next micro-dollar, so an estimate or bound never under-reports. Converting
// outside data in dollars (a JSON number, a catalog price) rounds to the
// nearest micro-dollar, which is exact for every figure written with six
// decimals or fewer. Format, the one formatter, rounds half to even at the
// precision a place shows, as fmt's %f does for dollars.
//
// Parse reads a user-given amount (a limit, a ceiling, a price) and names the
// key, the value and what is expected when it cannot.
package money
