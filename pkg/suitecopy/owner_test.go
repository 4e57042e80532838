package suitecopy

import (
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestCheckOwner(t *testing.T) {
	tests := []struct {
		owner, wantErr string
	}{
		{owner: "acme"},
		{owner: "my-org"},
		{owner: "a1-b2-c3"},
		{owner: "x"},
		{owner: strings.Repeat("a", 39)},
		{owner: "", wantErr: `--to "": want your GitHub user or organization name`},
		{owner: strings.Repeat("a", 40), wantErr: "at most 39 characters, this one 40"},
		{owner: "-acme", wantErr: "cannot begin or end with a hyphen"},
		{owner: "acme-", wantErr: "cannot begin or end with a hyphen"},
		{owner: "ac--me", wantErr: "single hyphens only"},
		{owner: "Acme", wantErr: `--to "Acme": write it in lower case (acme)`},
		{owner: "ac_me", wantErr: `only letters, digits and hyphens, not '_'`},
		{owner: "acme/runpod-gpu", wantErr: `not '/'`},
		{owner: "ac.me", wantErr: `not '.'`},
		{owner: "ac me", wantErr: `not ' '`},
		{owner: "acmé", wantErr: `not 'é'`},
	}
	for _, tc := range tests {
		t.Run(tc.owner, func(t *testing.T) {
			err := CheckOwner(tc.owner)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
			var oe *OwnerError
			assert.Assert(t, errors.As(err, &oe))
			assert.Check(t, is.Equal(oe.Owner, tc.owner))
		})
	}
}
