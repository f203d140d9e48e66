package facts

import (
	"regexp"
	"testing"
)

// rulesAsExpressions are the expressions the byte-at-a-time rules of
// rules.go replace.
var rulesAsExpressions = []struct {
	name string
	expr *regexp.Regexp
	rule func(string) bool
}{
	{"DNS label", regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`), isDNSLabel},
	{"DNS subdomain", regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`), isDNSSubdomain},
	{"package name", regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`), isPackageName},
	{"token", regexp.MustCompile(`^[a-z0-9]([a-z0-9._/-]*[a-z0-9])?$`), isToken},
	{"architecture", regexp.MustCompile(`^[a-z0-9_]{1,32}$`), isArchitecture},
	{"kind", regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,62}$`), isKindName},
}

// FuzzRulesReadAsTheirExpressions: each rule accepts exactly what its
// expression matches.
func FuzzRulesReadAsTheirExpressions(f *testing.F) {
	for _, s := range []string{"", "a", "-", "a-", "-a", "a-b", "a.b", "a..b", ".a", "a.", "a.-b", "a-.b", "A", "aB", "a_b", "a/b", "a__",
		"amd64", "arm64", "x86_64", "123456789012345678901234567890123", "12345678901234567890123456789012", "ServiceMonitor", "K8s", "9Kind",
		"a\n", "\na", "é", "aé", "a\x00", "monitoring.coreos.com", "cert-manager", "a.b-c.d"} {
		f.Add(s)
	}
	long := ""
	for range 64 {
		long += "K"
	}
	f.Add(long)
	f.Add(long[:63])
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range rulesAsExpressions {
			if got, want := r.rule(s), r.expr.MatchString(s); got != want {
				t.Errorf("%s %q: rule %v, expression %v", r.name, s, got, want)
			}
		}
	})
}
