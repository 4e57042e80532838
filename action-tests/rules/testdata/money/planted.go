// Package planted breaks the money rule on purpose: TestMoneyRuleCatchesAPlantedDollarField
// reads it. It is testdata, never built.
package planted

import "fmt"

type Bill struct {
	TotalUSD   float64
	SpentCents int64
	Percent    float64 // "percent" is no money word: not flagged
	Seconds    int64
	Prices     []float64
}

func estimate(pricePerHour float64, hours float64) (cost float64) { return pricePerHour * hours }

var budgetLimitDollars *float64

func show(b Bill) string {
	return fmt.Sprintf("$%.2f", b.TotalUSD) + fmt.Sprintf("at $%d.%02d", b.SpentCents/100, b.SpentCents%100) + fmt.Sprintf("%d%%", 5)
}
