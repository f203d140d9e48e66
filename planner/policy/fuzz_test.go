package policy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecode: no policy file panics the reader; what it says of one is
// printable on one line (it goes into plans and terminals); a policy it
// accepts holds each pattern as written (a glob without * matches its
// own text, and nothing longer; a host path prefix matches itself and
// what is under it, not a longer name beside it).
func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  namespaces: [app, 'team-*']\n  cluster_rbac_wildcards: false\n"))
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed: {registries: ['*']}\n"))
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n  actions: true\n  commands: ['helm version', 'kubectl get *']\n  host_paths: [/opt/zarf, /usr/local/bin/]\n  uncarried_images: false\ndenied:\n  namespaces: [kube-system]\n  commands: ['curl *']\n  host_paths: [/etc]\n"))
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\ndenied: {registries: [docker.io], crd_groups: ['*.k8s.io'], cluster_scoped_kinds: [rbac.authorization.k8s.io/*]}\n"))
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed: {}\nallowed: {}\n"))
	f.Add([]byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\ndenied: {actions: false, host_paths: [opt/../x]}\n"))
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
		for _, l := range []Lists{p.Allowed, p.Denied} {
			for _, f := range listFields {
				pats := *f.of(&l)
				if pats == nil {
					continue
				}
				for _, it := range pats.items {
					if strings.Contains(it.text, "*") {
						continue
					}
					s := it.text
					if f.paths {
						s = it.prefix
						if _, _, ok := pats.Match(s + "/a"); !ok {
							t.Fatalf("prefix %q does not match %q", it.text, s+"/a")
						}
					}
					if _, _, ok := pats.Match(s); !ok {
						t.Fatalf("pattern %q does not match its own text", it.text)
					}
					if pat, _, ok := pats.Match(s + "x"); ok && pat == it.text && s != "/" {
						t.Fatalf("pattern %q matches %q", it.text, s+"x")
					}
				}
			}
		}
	})
}
