package options

import (
	"io/fs"
	"strings"
	"testing"
)

// file_mode reads as Ansible's mode in octal; "" is 0600; what is not a
// permission, or lets others write, is an error saying what to give.
func TestParseFileMode(t *testing.T) {
	for s, want := range map[string]fs.FileMode{"": 0o600, "0640": 0o640, "640": 0o640, "0o644": 0o644, "0600": 0o600, "0": 0, "0755": 0o755} {
		if got, err := ParseFileMode(s); err != nil || got != want {
			t.Errorf("ParseFileMode(%q) = %o, %v; want %o", s, got, err, want)
		}
	}
	for s, why := range map[string]string{
		"u=rw,g=r": "is not an octal mode", "0x1a4": "is not an octal mode", "0648": "is not an octal mode", "-0640": "is not an octal mode",
		"01200": "sets bits beyond", "4755": "sets bits beyond", "0646": "lets others write", "0777": "lets others write", "rw": "is not an octal mode",
	} {
		if _, err := ParseFileMode(s); err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "'0640'") {
			t.Errorf("ParseFileMode(%q): %v; want an error saying %q and what to give", s, err, why)
		}
	}
	if s, err := FileModeOfNumber(0o640); err != nil || s != "0640" {
		t.Errorf("FileModeOfNumber(416) = %q, %v; want 0640", s, err)
	}
	if _, err := FileModeOfNumber(-1); err == nil {
		t.Errorf("FileModeOfNumber(-1): no error")
	}
}
