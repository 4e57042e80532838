package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Float is a float64 that decodes from a JSON number or a numeric string, as
// RunPod's costPerHr arrived in both forms. null decodes to 0. It marshals as a
// number.
type Float float64

// UnmarshalJSON accepts 0.74, "0.74" and null; anything else names the value.
func (f *Float) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*f = 0
		return nil
	}
	text := string(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("number %s: want a JSON number or numeric string", truncate(b))
		}
		text = strings.TrimSpace(s)
		if text == "" {
			*f = 0
			return nil
		}
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("number %s: want a finite JSON number or numeric string", truncate(b))
	}
	*f = Float(v)
	return nil
}

// MarshalJSON writes the value as a JSON number.
func (f Float) MarshalJSON() ([]byte, error) {
	return json.Marshal(float64(f))
}
