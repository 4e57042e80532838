package reputation

import (
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

// Unset (zero) and impossible parameters take the lane's defaults; set ones
// are kept.
func TestParamsWithDefaults(t *testing.T) {
	set := Params{HalfLife: time.Hour, PriorFailure: 0.5, PriorWeight: 3, Avoid: 0.6, QuarantineAfter: 4, QuarantineFor: time.Hour,
		RunTime: time.Minute, FailTime: time.Second, MachineHold: time.Hour, ScreenTime: 2 * time.Minute}
	for _, tt := range []struct {
		name string
		in   Params
		want Params
	}{
		{name: "unset", in: Params{}, want: DefaultParams},
		{name: "negative", in: Params{HalfLife: -1, PriorFailure: -0.1, PriorWeight: -1, Avoid: -1, QuarantineAfter: -1, QuarantineFor: -1,
			RunTime: -1, FailTime: -1, MachineHold: -1, ScreenTime: -1}, want: DefaultParams},
		{name: "a failure probability of 1 or more", in: Params{PriorFailure: 1}, want: DefaultParams},
		{name: "set", in: set, want: set},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Check(t, is.DeepEqual(tt.in.withDefaults(), tt.want))
		})
	}
}
