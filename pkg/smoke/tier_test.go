package smoke_test

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/org/runpod-gpu/pkg/cudaver"
	"github.com/org/runpod-gpu/pkg/smoke"
)

func TestTiersSelect(t *testing.T) {
	tests := []struct {
		driver   string
		wantTier smoke.TierName
		wantPTX  string
		wantErr  string
	}{
		{driver: "12.4", wantErr: "driver CUDA version below every runtime tier: driver CUDA 12.4 is below baseline 12.6"},
		{driver: "12.6", wantTier: smoke.TierBaseline, wantPTX: "8.5"},
		{driver: "12.7", wantTier: smoke.TierBaseline, wantPTX: "8.5"},
		{driver: "12.8", wantTier: smoke.TierFull, wantPTX: "8.7"},
		{driver: "13.0", wantTier: smoke.TierFull, wantPTX: "8.7"},
	}
	for _, tt := range tests {
		t.Run(tt.driver, func(t *testing.T) {
			driver, err := cudaver.Parse(tt.driver)
			assert.NilError(t, err)
			got, err := smoke.DefaultTiers.Select(driver)
			if tt.wantErr != "" {
				assert.ErrorIs(t, err, smoke.ErrNoRuntimeTier)
				assert.Error(t, err, tt.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, got.Name, tt.wantTier)
			assert.Equal(t, got.PTX.String(), tt.wantPTX)
		})
	}
}
