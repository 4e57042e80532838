package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FuzzParse checks the loader never panics and that its two outcomes are
// clean: a config that validates and that the JSON Schema accepts (the schema
// is never stricter than the code), or typed errors only.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/valid/*.yml", "testdata/invalid/*.yml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("gpu_tiers: [{name: a, gpu_ids: [\"x\"]}]\nregions: [NO, 'YES']\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("? [a]\n: b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data, "fuzz.yml")
		if err != nil {
			var syntaxErr *SyntaxError
			if errors.As(err, &syntaxErr) {
				// Only the parser may say so; a failing strict decode would
				// mean the checker let something through.
				if _, parseErr := parseDocument(data); parseErr == nil {
					t.Fatalf("parsable YAML reported as a syntax error: %v", err)
				}
				return
			}
			problems := fieldErrors(err)
			if len(problems) == 0 {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			for _, p := range problems {
				if p.Key == "" || p.Expected == "" {
					t.Fatalf("incomplete problem %#v", p)
				}
				// Errors never repeat the file's values: only a default's, or
				// the kind of value found.
				if p.Value != "" && !kindOfValue[p.Value] && !strings.HasSuffix(p.Value, " (the default)") {
					t.Fatalf("problem repeats a value of the file: %#v", p)
				}
			}
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse accepted a config Validate rejects: %v", err)
		}
		if err := validateYAML(t, data); err != nil {
			t.Fatalf("the schema rejects a config the loader accepts: %v", err)
		}
		encoded, err := json.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(encoded))
		if err != nil {
			t.Fatal(err)
		}
		if err := mustSchema(t).Validate(v); err != nil {
			t.Fatalf("the schema rejects the encoded config: %v", err)
		}
	})
}

// FuzzParseCUDAVersion checks that the parser agrees with the schema's
// pattern and that accepted versions have one spelling.
func FuzzParseCUDAVersion(f *testing.F) {
	for _, seed := range []string{"12.6", "12.10", "13.0", "0.1", "12.06", "1.", "999.999", "1000.1", "٣.٤"} {
		f.Add(seed)
	}
	var defs struct {
		Defs struct {
			CUDAVersion struct {
				Pattern string `json:"pattern"`
			} `json:"cudaVersion"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &defs); err != nil {
		f.Fatal(err)
	}
	schemaPattern := regexp.MustCompile(defs.Defs.CUDAVersion.Pattern)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseCUDAVersion(s)
		if (err == nil) != schemaPattern.MatchString(s) {
			t.Fatalf("%q: parser error %v, schema match %v", s, err, schemaPattern.MatchString(s))
		}
		if err != nil {
			if !errors.Is(err, ErrCUDAVersion) {
				t.Fatalf("%q: untyped error %v", s, err)
			}
			return
		}
		if v.String() != s {
			t.Fatalf("%q parsed to %v, which prints as %q", s, v, v.String())
		}
		if !v.valid() {
			t.Fatalf("%q parsed to invalid %#v", s, v)
		}
	})
}
