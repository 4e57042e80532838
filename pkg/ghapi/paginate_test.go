package ghapi

import (
	"errors"
	"testing"

	"github.com/google/go-github/v66/github"
	"gotest.tools/v3/assert"
)

func TestCollectPages(t *testing.T) {
	failure := errors.New("boom")
	tests := []struct {
		name      string
		maxPages  int
		next      map[int]int // page → NextPage from its Link header
		failOn    int
		wantPages []int
		wantErr   string
	}{
		{name: "single page", maxPages: 3, wantPages: []int{1}},
		{name: "follows next", maxPages: 3, next: map[int]int{1: 2, 2: 3}, wantPages: []int{1, 2, 3}},
		{name: "exactly the bound", maxPages: 2, next: map[int]int{1: 2}, wantPages: []int{1, 2}},
		{name: "over the bound", maxPages: 2, next: map[int]int{1: 2, 2: 3}, wantErr: "things: more than 2 pages"},
		{name: "next that goes backwards stops", maxPages: 5, next: map[int]int{1: 2, 2: 1}, wantPages: []int{1, 2}},
		{name: "zero bound means the default", maxPages: 0, next: map[int]int{1: 2}, wantPages: []int{1, 2}},
		{name: "fetch error", maxPages: 3, next: map[int]int{1: 2}, failOn: 2, wantErr: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := collectPages("things", tt.maxPages, func(page int) ([]int, *github.Response, error) {
				if page == tt.failOn {
					return nil, nil, failure
				}
				return []int{page}, &github.Response{NextPage: tt.next[page]}, nil
			})
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				assert.Check(t, got == nil)
				return
			}
			assert.NilError(t, err)
			assert.DeepEqual(t, got, tt.wantPages)
		})
	}
}
