package facts

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// dnsCases are names on each side of each rule's edges.
var dnsCases = []string{
	"", "a", "0", "-", "a-", "-a", "a-b", "a--b", "A", "aB", "a_b", "a.b", "a..b", ".a", "a.", "a.-b", "a-.b",
	"example.com", "cert-manager.io", "x.y.z.0", "ü", "a\n", "a b", "a\x00",
	strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254),
	strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 127) + "a", strings.Repeat("a", 70) + ".io",
}

// The rules written here say yes where Kubernetes' own validation says
// yes, and no where it says no.
func TestDNSRulesAreKubernetes(t *testing.T) {
	for _, s := range dnsCases {
		checkDNS(t, s)
	}
}

func FuzzDNSRulesAreKubernetes(f *testing.F) {
	for _, s := range dnsCases {
		f.Add(s)
	}
	f.Fuzz(checkDNS)
}

func checkDNS(t *testing.T, s string) {
	if ours, theirs := dnsLabel(s) == "", len(validation.IsDNS1123Label(s)) == 0; ours != theirs {
		t.Errorf("%q: a DNS label here %v, to Kubernetes %v", s, ours, theirs)
	}
	if ours, theirs := dnsSubdomain(s) == "", len(validation.IsDNS1123Subdomain(s)) == 0; ours != theirs {
		t.Errorf("%q: a DNS subdomain here %v, to Kubernetes %v", s, ours, theirs)
	}
}
