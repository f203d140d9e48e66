package options

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// DefaultFileMode is the mode of a file the caller writes (save_to,
// html_to, a deploy report) when file_mode is not given: its owner's
// alone, since what it holds can be what the cluster holds (names,
// owners, a chart's lookups). It applies to a file rewritten too, so a
// file an older release left readable by all is closed on its next
// write.
const DefaultFileMode fs.FileMode = 0o600

// ParseFileMode reads file_mode as Ansible's mode argument is written in
// octal: "0640", "640" or "0o640"; "" is DefaultFileMode. It takes the
// permission bits alone (no set-user-ID, set-group-ID or sticky bit),
// and no write for others: a saved plan anyone may write is refused when
// it is read back (plan_file), and a page or report so written could be
// changed by anyone. Symbolic modes (u=rw,g=r) are not taken.
func ParseFileMode(s string) (fs.FileMode, error) {
	if s == "" {
		return DefaultFileMode, nil
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
	n, err := strconv.ParseUint(digits, 8, 32)
	switch {
	case err != nil || digits == "" || strings.ContainsAny(digits, "+-_"):
		return 0, fmt.Errorf("%q is not an octal mode: give one such as '0640' (symbolic modes such as u=rw,g=r are not taken)", s)
	case n&^0o777 != 0:
		return 0, fmt.Errorf("%q (0%o) sets bits beyond read, write and execute for owner, group and others; give one such as '0640' (a number written without its leading 0, such as 640, is decimal: write 0640 or quote it)", s, n)
	case n&0o002 != 0:
		return 0, fmt.Errorf("%q lets others write the file (a saved plan anyone may write is refused as plan_file); give one such as '0640'", s)
	}
	return fs.FileMode(n), nil
}

// FileModeOfNumber is file_mode as its text, when Ansible gives it as a
// number: YAML reads an unquoted 0640 as octal, so the number is the
// mode's value (416), written back in octal ("0640"), as Ansible's file
// modules take it. A negative or fractional number is an error.
func FileModeOfNumber(n int64) (string, error) {
	if n < 0 {
		return "", fmt.Errorf("%d is not a mode: give one such as '0640'", n)
	}
	return fmt.Sprintf("0%o", n), nil
}
