package workflowplay

import (
	"os"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"
	is "gotest.tools/v3/assert/cmp"
)

func TestReadFileCommand(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    map[string]string
		wantErr string
	}{
		{name: "name=value lines", text: "a=1\nb=x=y\n", want: map[string]string{"a": "1", "b": "x=y"}},
		{name: "empty value", text: "a=\n", want: map[string]string{"a": ""}},
		{
			name: "delimiter block keeps its lines",
			text: "notes<<ghadelimiter_1\nfirst\n\nthird\nghadelimiter_1\n",
			want: map[string]string{"notes": "first\n\nthird"},
		},
		{name: "empty delimiter block", text: "a<<EOF\nEOF\n", want: map[string]string{"a": ""}},
		{
			name: "mixed, blank lines between, later value wins",
			text: "a=1\n\nb<<EOF\nx=y\nEOF\n  \na=2\n",
			want: map[string]string{"a": "2", "b": "x=y"},
		},
		{name: "<< after = is a value", text: "a=b<<c\n", want: map[string]string{"a": "b<<c"}},
		{name: "empty file", text: "", want: map[string]string{}},
		{name: "missing delimiter", text: "a<<EOF\nline\n", wantErr: `matching delimiter not found "EOF"`},
		{name: "block without a name", text: "<<EOF\nx\nEOF\n", wantErr: `invalid format "<<EOF": want name<<DELIMITER`},
		{name: "block without a delimiter", text: "a<<\n", wantErr: `invalid format "a<<": want name<<DELIMITER`},
		{name: "line without =", text: "justtext\n", wantErr: `invalid format "justtext": want name=value or name<<DELIMITER`},
		{name: "value without a name", text: "=v\n", wantErr: `invalid format "=v": want name=value or name<<DELIMITER`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "output")
			assert.NilError(t, os.WriteFile(path, []byte(tt.text), 0o600))
			got, err := ReadFileCommand(path)
			if tt.wantErr != "" {
				assert.Error(t, err, tt.wantErr)
				return
			}
			assert.NilError(t, err)
			assert.Check(t, is.DeepEqual(got, tt.want))
		})
	}
}

func TestReadFileCommandMissingFile(t *testing.T) {
	_, err := ReadFileCommand(filepath.Join(t.TempDir(), "absent"))
	assert.Check(t, os.IsNotExist(err), "err = %v", err)
}
