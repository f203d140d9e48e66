package policy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecode: no policy file panics the reader; what it says of one is
// printable on one line (it goes into plans and terminals); a policy it
// accepts holds each pattern as written (a pattern without * matches its
// own text, and nothing longer).
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  namespaces: [app, 'team-*']\n  cluster_rbac_wildcards: false\n"))
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed: {registries: ['*']}\n"))
	f.Add([]byte("allowed:\n  namespaces: [[[[a]]]]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("\xff\x00: \x1b[31m\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b, "policy.yaml")
		if err != nil {
			msg := err.Error()
			if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r\x1b") {
				t.Fatalf("the refusal is not printable on one line: %q", msg)
			}
			return
		}
		for _, pats := range []*Patterns{p.Namespaces, p.CRDGroups, p.ClusterScopedKinds, p.Registries} {
			if pats == nil {
				continue
			}
			for _, it := range pats.items {
				if strings.Contains(it.text, "*") {
					continue
				}
				if _, _, ok := pats.Match(it.text); !ok {
					t.Fatalf("pattern %q does not match its own text", it.text)
				}
				if pat, _, ok := pats.Match(it.text + "x"); ok && pat == it.text {
					t.Fatalf("pattern %q matches %q", it.text, it.text+"x")
				}
			}
		}
	})
}
