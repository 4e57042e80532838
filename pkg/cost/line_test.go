package cost

import (
	"errors"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

func TestLineFormat(t *testing.T) {
	got := AttemptLine(rejectedAttempts()[0]).Format()
	assert.Equal(t, got, `runpod-gpu::attempt {"attempt":1,"candidate":"live-1","gpu":"NVIDIA RTX A4000","podId":"p1rejected",`+
		`"price":{"perHour":0.17,"source":"v2 cost"},"outcome":"rejected","reason":"SMOKE FAIL: PTX ISA 8.7 not supported by driver 12.6",`+
		`"seconds":212,"dollars":0.010012}`) // 212 s at $0.17/h, rounded up to the micro-dollar

	a := rejectedAttempts()[1]
	a.Reason = "line one\nline two\r\n::error::injected"
	formatted := AttemptLine(a).Format()
	assert.Assert(t, !strings.ContainsAny(formatted, "\r\n"), "a structured line is always one line: %q", formatted)
	assert.Assert(t, !strings.HasPrefix(formatted, "::"), "never a workflow command")
}

func TestParseLine(t *testing.T) {
	attempt := AttemptLine(rejectedAttempts()[1]).Format()
	cost := CostLine(acceptedReport(t)).Format()
	tests := []struct {
		name     string
		in       string
		wantOK   bool
		wantKind LineKind
		wantErr  string
		wantIs   error
	}{
		{name: "attempt", in: attempt, wantOK: true, wantKind: LineAttempt},
		{name: "cost", in: cost, wantOK: true, wantKind: LineCost},
		{name: "github log timestamp", in: "2026-10-07T12:00:00.1234567Z " + attempt, wantOK: true, wantKind: LineAttempt},
		{name: "crlf and indentation", in: "  " + attempt + "\r\n", wantOK: true, wantKind: LineAttempt},
		{name: "ordinary log line", in: "2026-10-07T12:00:00Z Run actions/checkout@v4"},
		{name: "empty", in: ""},
		{name: "prefix in the middle is not a line", in: "echo runpod-gpu::attempt {}"},
		{name: "workflow command", in: "::warning::runpod-gpu::cost {}"},
		{name: "unknown kind", in: `runpod-gpu::bill {"x":1}`, wantOK: true,
			wantErr: `log line: unknown structured log line kind "bill": want attempt, cost or seal`, wantIs: ErrUnknownLineKind},
		{name: "seal", in: SealLine([]byte("{}\n")).Format(), wantOK: true, wantKind: LineSeal},
		{name: "seal of no digest", in: `runpod-gpu::seal {"sha256":"abc"}`, wantOK: true,
			wantErr: `sha256 "abc": invalid value: want 64 lower-case hex digits`, wantIs: ErrInvalidValue},
		{name: "seal in upper case", in: `runpod-gpu::seal {"sha256":"` + strings.Repeat("A", 64) + `"}`, wantOK: true, wantIs: ErrInvalidValue},
		{name: "missing payload", in: "runpod-gpu::attempt", wantOK: true,
			wantErr: "want one JSON object after the kind", wantIs: ErrInvalidValue},
		{name: "truncated JSON", in: `runpod-gpu::attempt {"attempt":1`, wantOK: true, wantIs: ErrInvalidValue},
		{name: "trailing garbage", in: `runpod-gpu::attempt {"attempt":1} x`, wantOK: true, wantIs: ErrInvalidValue},
		{name: "not an object", in: `runpod-gpu::attempt [1]`, wantOK: true, wantErr: "[1]: want a JSON object"},
		{name: "bad outcome", in: `runpod-gpu::attempt {"attempt":1,"outcome":"won"}`, wantOK: true,
			wantErr: `log line runpod-gpu::attempt: key "outcome": invalid value: "won"`, wantIs: ErrInvalidValue},
		{name: "bad seconds", in: `runpod-gpu::attempt {"attempt":1,"outcome":"rejected","seconds":"ten"}`, wantOK: true,
			wantErr: `key "seconds": invalid value: "ten"`, wantIs: ErrInvalidValue},
		{name: "cost stages that do not sum", in: strings.Replace(cost, `"seconds":96`, `"seconds":95`, 1), wantOK: true,
			wantIs: ErrStageSum},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			line, ok, err := ParseLine(tc.in)
			assert.Equal(t, ok, tc.wantOK)
			if tc.wantErr != "" || tc.wantIs != nil {
				assert.Assert(t, err != nil)
				if tc.wantErr != "" {
					assert.ErrorContains(t, err, tc.wantErr)
				}
				if tc.wantIs != nil {
					assert.Assert(t, errors.Is(err, tc.wantIs), "got %v", err)
				}
				return
			}
			assert.NilError(t, err)
			assert.Equal(t, line.Kind, tc.wantKind)
		})
	}
}

func TestLineRoundTrip(t *testing.T) {
	for _, l := range []Line{
		AttemptLine(rejectedAttempts()[0]),
		AttemptLine(Attempt{Number: 3, Candidate: "full", Outcome: OutcomeNoCapacity, Reason: "no capacity"}),
		CostLine(acceptedReport(t)),
		CostLine(Report{Rejected: rejectedAttempts()}),
		SealLine([]byte("a cost artifact file")),
	} {
		got, ok, err := ParseLine(l.Format())
		assert.NilError(t, err)
		assert.Assert(t, ok)
		assert.Equal(t, got.Format(), l.Format())
	}
	got, _, err := ParseLine(CostLine(acceptedReport(t)).Format())
	assert.NilError(t, err)
	assert.Equal(t, got.Cost.Dollars().String(), "$0.1150")
	assert.Equal(t, got.Cost.Window.Seconds(), KnownSeconds(600))
}

func FuzzParseLine(f *testing.F) {
	f.Add(`runpod-gpu::attempt {"attempt":1,"candidate":"live-1","gpu":"A40","price":{"perHour":0.4},"outcome":"rejected","seconds":61}`)
	f.Add(`2026-10-07T12:00:00.1234567Z runpod-gpu::cost {"podId":"p","window":{"start":"2026-09-23T08:48:28Z","end":"2026-09-23T08:48:38Z"},"stages":[{"kind":"startup","seconds":10}]}`)
	f.Add(`runpod-gpu::cost {"window":{"start":"2026-09-23 08:48:28.204 +0000 UTC","end":null}}`)
	f.Add(`runpod-gpu::nope {}`)
	f.Add(`plain text`)
	f.Fuzz(func(t *testing.T, s string) {
		line, ok, err := ParseLine(s)
		if !ok && err != nil {
			t.Fatalf("not a line but an error: %v", err)
		}
		if !ok || err != nil {
			return
		}
		// A parsed line formats to a line that parses back to the same text.
		formatted := line.Format()
		if strings.ContainsAny(formatted, "\r\n") {
			t.Fatalf("multi-line output %q", formatted)
		}
		again, ok, err := ParseLine(formatted)
		if !ok || err != nil {
			t.Fatalf("re-parse of %q: ok=%v err=%v", formatted, ok, err)
		}
		if again.Format() != formatted {
			t.Fatalf("not a fixed point:\n%s\n%s", formatted, again.Format())
		}
	})
}
