package facts

// The two name rules of Kubernetes (RFC 1123 as its API server applies
// them) that the planner checks. They are written here rather than taken
// from k8s.io/apimachinery's validation package so that this package, and
// the module binary that decodes saved plans with it, carry no Kubernetes
// package; TestDNSRulesAreKubernetes holds them to that package's answers.

const (
	// maxDNSLabel and maxDNSSubdomain are the lengths the API server allows.
	maxDNSLabel     = 63
	maxDNSSubdomain = 253
)

// dnsLabel says why s is not a DNS label (a namespace's name), or "".
func dnsLabel(s string) string {
	switch {
	case len(s) > maxDNSLabel:
		return "a DNS label is at most 63 characters"
	case !isDNSLabel(s):
		return "a DNS label is lower-case letters, digits and '-', starting and ending with a letter or digit (my-name, 123-abc)"
	}
	return ""
}

// dnsSubdomain says why s is not a DNS subdomain (a CRD's or a storage
// class's name), or "".
func dnsSubdomain(s string) string {
	switch {
	case len(s) > maxDNSSubdomain:
		return "a DNS subdomain is at most 253 characters"
	case !isDNSSubdomain(s):
		return "a DNS subdomain is lower-case letters, digits, '-' and '.', each part starting and ending with a letter or digit (example.com)"
	}
	return ""
}
