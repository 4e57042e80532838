package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 9, 23, 8, 48, 28, 204_000_000, time.UTC)
	tests := []struct {
		name    string
		in      string
		want    time.Time
		wantErr string
	}{
		{name: "rfc3339 fraction", in: "2026-09-23T08:48:28.204Z", want: want},
		{name: "rfc3339 offset", in: "2026-09-23T10:48:28.204+02:00", want: want},
		{name: "rfc3339 no fraction", in: "2026-09-23T08:48:28Z", want: want.Truncate(time.Second)},
		{name: "go layout 3 digits", in: "2026-09-23 08:48:28.204 +0000 UTC", want: want},
		{name: "go layout 1 digit", in: "2026-09-23 08:48:28.2 +0000 UTC", want: want.Truncate(100 * time.Millisecond)},
		{name: "go layout 9 digits", in: "2026-09-23 08:48:28.204000001 +0000 UTC", want: want.Add(time.Nanosecond)},
		{name: "go layout no fraction", in: "2026-09-23 08:48:28 +0000 UTC", want: want.Truncate(time.Second)},
		{name: "go layout zone name", in: "2026-09-23 10:48:28.204 +0200 CEST", want: want},
		{name: "go layout numeric zone twice", in: "2026-09-23 10:48:28.204 +0200 +0200", want: want},
		{name: "go layout monotonic suffix", in: "2026-09-23 08:48:28.204 +0000 UTC m=+12.5", want: want},
		{name: "empty", in: "  ", wantErr: "empty"},
		{name: "garbage", in: "yesterday", wantErr: `timestamp "yesterday": want RFC 3339`},
		{name: "date only", in: "2026-09-23", wantErr: "want RFC 3339"},
		{name: "year zero in UTC", in: "0000-01-01T00:00:00+01:00", wantErr: "outside 0001–9999"},
		{name: "year 10000 in UTC", in: "9999-12-31T23:00:00-02:00", wantErr: "outside 0001–9999"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTime(tc.in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, got.Equal(tc.want), "got %s want %s", got, tc.want)
			assert.Equal(t, got.Location(), time.UTC)
		})
	}
}

func TestTimeJSON(t *testing.T) {
	var rec struct {
		Started  Time `json:"startedAt"`
		Created  Time `json:"createdAt"`
		Empty    Time `json:"empty"`
		Absent   Time `json:"absent"`
		GoLayout Time `json:"lastStartedAt"`
	}
	body := `{"startedAt":null,"createdAt":"2026-06-01T12:00:00Z","empty":"","lastStartedAt":"2026-09-23 08:48:28.204 +0000 UTC"}`
	assert.NilError(t, json.Unmarshal([]byte(body), &rec))
	assert.Check(t, !rec.Started.Known(), "null must be unknown")
	assert.Check(t, !rec.Empty.Known(), "empty string must be unknown")
	assert.Check(t, !rec.Absent.Known(), "absent must be unknown")
	created, ok := rec.Created.Get()
	assert.Check(t, ok)
	assert.Check(t, created.Equal(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)))
	assert.Check(t, rec.GoLayout.Known())
	assert.Equal(t, rec.Started.String(), "unknown")

	out, err := json.Marshal(rec)
	assert.NilError(t, err)
	assert.Check(t, is.Contains(string(out), `"startedAt":null`))
	assert.Check(t, is.Contains(string(out), `"lastStartedAt":"2026-09-23T08:48:28.204Z"`))

	var bad Time
	assert.ErrorContains(t, json.Unmarshal([]byte(`12345`), &bad), "want a JSON string or null")
	assert.ErrorContains(t, json.Unmarshal([]byte(`"soon"`), &bad), `timestamp "soon"`)
}

func TestFloatJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr string
	}{
		{in: `0.74`, want: 0.74},
		{in: `"0.74"`, want: 0.74},
		{in: `" 1.5 "`, want: 1.5},
		{in: `""`, want: 0},
		{in: `null`, want: 0},
		{in: `3`, want: 3},
		{in: `"abc"`, wantErr: "want a finite JSON number"},
		{in: `"NaN"`, wantErr: "want a finite JSON number"},
		{in: `true`, wantErr: "want a finite JSON number"},
		{in: `[1]`, wantErr: "want a finite JSON number"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var f Float
			err := json.Unmarshal([]byte(tc.in), &f)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, float64(f), tc.want)
		})
	}
	out, err := json.Marshal(struct{ C Float }{C: 0.44})
	assert.NilError(t, err)
	assert.Equal(t, string(out), `{"C":0.44}`)
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"2026-09-23T08:48:28.204Z", "2026-09-23 08:48:28.204 +0000 UTC", "", "x", "2026-09-23 08:48:28 +0200 CEST m=+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s)
		if err != nil {
			return
		}
		if got.Location() != time.UTC {
			t.Fatalf("ParseTime(%q) not UTC", s)
		}
		// A parsed time survives a JSON round trip unchanged.
		b, err := json.Marshal(KnownTime(got))
		if err != nil {
			t.Fatal(err)
		}
		var back Time
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("round trip of %q: %v", s, err)
		}
		if bt, _ := back.Get(); !bt.Equal(got) {
			t.Fatalf("round trip of %q: %s != %s", s, bt, got)
		}
	})
}

func FuzzFloat(f *testing.F) {
	for _, s := range []string{`0.74`, `"0.74"`, `null`, `""`, `"1e309"`, `-0`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v Float
		_ = json.Unmarshal([]byte(s), &v) // must never panic
	})
}

func TestIsCommitSHA(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{strings.Repeat("0a", 20), true},
		{strings.Repeat("f", 64), true},
		{"", false},
		{"abc1234", false},
		{strings.Repeat("A", 40), false},
		{strings.Repeat("g", 40), false},
		{strings.Repeat("a", 41), false},
		{strings.Repeat("a", 39) + "\n", false},
		{"refs/heads/main", false},
	}
	for _, tc := range tests {
		assert.Equal(t, IsCommitSHA(tc.in), tc.want, "%q", tc.in)
	}
}
