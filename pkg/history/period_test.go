package history

import (
	"errors"
	"testing"
	"time"

	"gotest.tools/v3/assert"
)

func TestParseRange(t *testing.T) {
	tests := []struct {
		name, since, until string
		want               string
		wantErr            string
	}{
		{name: "one day", since: "2026-10-06", until: "2026-10-06", want: "2026-10-06..2026-10-06"},
		{name: "a week", since: "2026-10-06", until: "2026-10-12", want: "2026-10-06..2026-10-12"},
		{name: "reversed", since: "2026-10-07", until: "2026-10-06", wantErr: "invalid date range: until 2026-10-06 is before since 2026-10-07"},
		{name: "not a date", since: "last week", until: "2026-10-06", wantErr: `invalid date range: since "last week": want a UTC date YYYY-MM-DD`},
		{name: "a timestamp", since: "2026-10-06", until: "2026-10-06T12:00:00Z", wantErr: `until "2026-10-06T12:00:00Z": want a UTC date YYYY-MM-DD`},
		{name: "empty", since: "", until: "2026-10-06", wantErr: `since "": want a UTC date YYYY-MM-DD`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRange(tc.since, tc.until)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Assert(t, errors.Is(err, ErrInvalidRange))
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, r.String(), tc.want)
		})
	}
}

func TestParseRangeOr(t *testing.T) {
	week := LastFullDays(t0, DefaultDays)
	tests := []struct {
		name, since, until string
		want               string
		wantErr            string
	}{
		{name: "neither: the default", want: "2026-09-29..2026-10-05"},
		{name: "both", since: "2026-10-01", until: "2026-10-02", want: "2026-10-01..2026-10-02"},
		{name: "only since", since: "2026-10-01",
			wantErr: `invalid date range: since "2026-10-01", until "": give both dates, or neither for the last 7 full days`},
		{name: "only until", until: "2026-10-01", wantErr: "give both dates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRangeOr(tc.since, tc.until, week)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, r.String(), tc.want)
		})
	}
}

func TestRangeDays(t *testing.T) {
	r := LastFullDays(time.Date(2026, 10, 13, 0, 5, 0, 0, time.UTC), 7)
	assert.Equal(t, r.String(), "2026-10-06..2026-10-12", "the last seven full days, today excluded")
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{date(2026, 10, 6), true},
		{date(2026, 10, 12).Add(24*time.Hour - time.Nanosecond), true},
		{date(2026, 10, 13), false},
		{date(2026, 10, 6).Add(-time.Nanosecond), false},
	} {
		assert.Check(t, r.Contains(tc.at) == tc.want, "%s", tc.at)
	}
}

func TestSearchSplitting(t *testing.T) {
	day := date(2026, 10, 7)
	tests := []struct {
		name        string
		from, to    time.Time
		wantFilter  string
		wantMid     time.Time
		wantNoSplit bool
	}{
		{name: "days", from: day, to: day.AddDate(0, 0, 3), wantFilter: "2026-10-07..2026-10-09", wantMid: day.AddDate(0, 0, 1)},
		{name: "one day splits into hours", from: day, to: day.AddDate(0, 0, 1), wantFilter: "2026-10-07..2026-10-07", wantMid: day.Add(12 * time.Hour)},
		{name: "hours", from: day.Add(12 * time.Hour), to: day.Add(18 * time.Hour),
			wantFilter: "2026-10-07T12:00:00Z..2026-10-07T17:59:59Z", wantMid: day.Add(15 * time.Hour)},
		{name: "one hour splits into minutes", from: day, to: day.Add(time.Hour),
			wantFilter: "2026-10-07T00:00:00Z..2026-10-07T00:59:59Z", wantMid: day.Add(30 * time.Minute)},
		{name: "one second cannot split", from: day, to: day.Add(time.Second),
			wantFilter: "2026-10-07T00:00:00Z..2026-10-07T00:00:00Z", wantNoSplit: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, createdFilter(tc.from, tc.to), tc.wantFilter)
			mid, ok := splitPoint(tc.from, tc.to)
			assert.Equal(t, !ok, tc.wantNoSplit)
			assert.Assert(t, mid.Equal(tc.wantMid), "split at %s", mid)
		})
	}
}
