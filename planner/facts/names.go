package facts

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Everything the planner names comes from archives made outside the
// enclave and ends up in messages, graphs and the commands a playbook
// runs. So every name is checked against the rule of what it names
// before anything uses it, and a name that breaks its rule is shown only
// quoted and cut short (Quote).

// MaxNameLength caps a package name: zarf keeps a deployed package's state
// in the secret zarf-package-<name>, whose name is a DNS subdomain of at
// most 253 characters.
const MaxNameLength = 240

// A package name follows zarf's rule for metadata.name (v1alpha1
// ZarfMetadata: ^[a-z0-9][a-z0-9\-]*$; isPackageName). The planner's own
// identifiers (capabilities and alternative group ids) are lowercase
// letters, digits, and . _ / - inside (isToken); an architecture is
// lowercase letters, digits and _, as Go's GOARCH values (isArchitecture).

// CheckPackageName reports why s is not a zarf package name.
func CheckPackageName(s string) error {
	if len(s) > MaxNameLength || !isPackageName(s) {
		return fmt.Errorf("%s is not a zarf package name: lowercase letters, digits and dashes, starting with a letter or digit, at most %d characters", Quote(s), MaxNameLength)
	}
	return nil
}

// CheckFlavor reports why s is not a flavor. zarf sets no rule for
// flavors; the planner holds them to the package-name rule, so they print
// safely. The empty flavor is none.
func CheckFlavor(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > 63 || !isPackageName(s) {
		return fmt.Errorf("%s is not a flavor: lowercase letters, digits and dashes, starting with a letter or digit, at most 63 characters", Quote(s))
	}
	return nil
}

// CheckArchitecture reports why s is not an architecture name.
func CheckArchitecture(s string) error {
	if !isArchitecture(s) {
		return fmt.Errorf("%s is not an architecture: lowercase letters, digits and underscores, at most 32 (such as amd64 or arm64)", Quote(s))
	}
	return nil
}

// checkToken reports why s is not a capability or group id.
func checkToken(what, s string) error {
	if len(s) > 253 || !isToken(s) {
		return fmt.Errorf("%s is not a %s: lowercase letters and digits, with . _ / - inside, at most 253 characters", Quote(s), what)
	}
	return nil
}

// A Kubernetes kind is a CamelCase identifier (apimachinery's kinds are
// Go type names; isKindName).

// checkGroupKind reports why s is not a custom resource's "group/Kind".
func checkGroupKind(s string) error {
	group, kind, ok := strings.Cut(s, "/")
	if !ok || strings.Contains(kind, "/") {
		return fmt.Errorf("%s is not a kind of custom resource: write its API group and kind, group/Kind (monitoring.coreos.com/ServiceMonitor)", Quote(s))
	}
	if err := checkSubdomain("API group", group); err != nil {
		return err
	}
	if !isKindName(kind) {
		return fmt.Errorf("%s is not a kind: letters and digits, starting with a letter, at most 63", Quote(kind))
	}
	return nil
}

// CheckCRDName reports why s is not a CRD's name (a DNS subdomain).
func CheckCRDName(s string) error { return checkSubdomain("CRD", s) }

// checkSubdomain reports why s is not a DNS subdomain (a CRD or storage
// class name).
func checkSubdomain(what, s string) error {
	if why := dnsSubdomain(s); why != "" {
		return fmt.Errorf("%s is not a %s name: %s", Quote(s), what, why)
	}
	return nil
}

// checkLabel reports why s is not a DNS label (a namespace name).
func checkLabel(what, s string) error {
	if why := dnsLabel(s); why != "" {
		return fmt.Errorf("%s is not a %s name: %s", Quote(s), what, why)
	}
	return nil
}

// maxConstraint caps a semver constraint's text.
const maxConstraint = 256

// checkConstraint reports why s is not a constraint worth parsing: too
// long, or holding anything but printable ASCII.
func checkConstraint(s string) error {
	if len(s) > maxConstraint {
		return fmt.Errorf("%s is %d bytes, more than the %d a semver constraint may have", Quote(s), len(s), maxConstraint)
	}
	for _, r := range s {
		if r < ' ' || r > '~' {
			return fmt.Errorf("%s holds %q, which no semver constraint holds", Quote(s), r)
		}
	}
	return nil
}

// Quote shows a value from an archive safely in a message: quoted with
// every control character escaped, and cut to its first 64 characters
// when longer.
func Quote(s string) string {
	const limit = 64
	if utf8.RuneCountInString(s) <= limit {
		return strconv.Quote(s)
	}
	runes := []rune(s)
	return strconv.Quote(string(runes[:limit])) + fmt.Sprintf("… (%d bytes)", len(s))
}

// Printable replaces every control character of s (and every byte that is
// not UTF-8) by its escape, so a value from an archive prints on one line
// of a terminal and cannot move the cursor or colour what follows.
func Printable(s string) string {
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	q := strconv.QuoteToGraphic(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}
