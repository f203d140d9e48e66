package crdupgrade

import (
	"regexp"
	"strings"
	"testing"
)

// plainExpression is what plain reads a byte at a time.
var plainExpression = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+/-]{0,252}$`)

// FuzzPlainReadsAsItsExpression: plain accepts exactly what its
// expression matches.
func FuzzPlainReadsAsItsExpression(f *testing.F) {
	for _, s := range []string{"", "a", "A", "0", "-", ".a", "_a", "+a", "/a", "a-", "a.b", "a_b", "a+b", "a/b", "v1beta1",
		"cert-manager/webhook", "zarf-package-x-amd64-1.0.0.tar.zst", "a b", "a\n", "\na", "a\x00", "é", "aé", "a:b", "a\\b", "a\"b",
		strings.Repeat("a", 252), strings.Repeat("a", 253), strings.Repeat("a", 254), "a" + strings.Repeat("-", 252), "a" + strings.Repeat("-", 253)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plain(s), plainExpression.MatchString(s); got != want {
			t.Errorf("%q: plain %v, expression %v", s, got, want)
		}
	})
}
