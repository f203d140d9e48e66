// Package policy holds packages to a maximal policy: an operator's bound
// on what the packages of a bundle may do to a cluster and to the host
// that deploys them (the namespaces they touch, the CRD groups they
// install, the cluster-scoped kinds they create, the registries their
// images come from and whether they carry them, whether they may grant
// RBAC wildcards cluster-wide, the files they write on the host and the
// commands they run there). A policy allows (`allowed:`) and denies
// (`denied:`); a denial wins over an allowance. It decodes the policy
// from bytes and judges the claims inspect collected; it opens no file
// and contacts no cluster.
//
// A claim that cannot be known from the archive (facts.UnknownClaim) is
// never assumed to be within the policy: it is refused, saying why it
// cannot be known, when it may affect a claim kind (UnknownClaim.Affects)
// that one of the policy's fields bounds. An allowed list holding a
// pattern that matches everything ("*", or only stars) bounds nothing.
package policy

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// APIVersion and Kind identify a policy document.
const (
	APIVersion = "colonel-byte.dev/v1alpha1"
	Kind       = "MaximalPolicy"
)

// MaxSize caps a policy document.
const MaxSize = 1 << 20

// policyShape bounds a policy document before it is decoded.
var policyShape = facts.Shape{Nodes: 50000, Keys: 1000, Documents: 1, Depth: facts.MaxDepth}

// Policy is a decoded policy document. A field left out puts no bound on
// its claims; an empty allowed list allows none, an empty denied list
// denies none.
type Policy struct {
	// File names the document in messages (its path, or "policy").
	File string
	// Allowed are the lists of `allowed:` (a claim must match one of
	// their patterns), Denied those of `denied:` (a claim matching one
	// of their patterns is refused, whatever Allowed says).
	Allowed, Denied Lists
	// ClusterRBACWildcards, when set to false, refuses a ClusterRole
	// bound cluster-wide with a rule that grants "*".
	ClusterRBACWildcards *Switch
	// Actions, when set to false, refuses every action (command or
	// wait) zarf runs on the deploying host: onDeploy and onRemove.
	Actions *Switch
	// UncarriedImages, when set to false, refuses an image a workload
	// uses that the package does not carry.
	UncarriedImages *Switch
	// CRDUpgradeWaivers are the CRDs whose upgrade check the operator
	// waives (crd_upgrade_waivers), each with why: a refused upgrade of
	// one is planned, and the plan and the deploy report print the
	// waiver and its reason, never silently.
	CRDUpgradeWaivers []Waiver
}

// Waiver is one CRD whose upgrade check is waived, and why.
type Waiver struct {
	// CRD is the CRD's name (plural.group).
	CRD string
	// Reason is the operator's, printed wherever the waiver applies.
	Reason string
	// Line is the entry's line in the policy.
	Line int
}

// Waived is the waiver of the CRD named crd's upgrade check, if the
// policy holds one.
func (p *Policy) Waived(crd string) (Waiver, bool) {
	if p == nil {
		return Waiver{}, false
	}
	for _, w := range p.CRDUpgradeWaivers {
		if w.CRD == crd {
			return w, true
		}
	}
	return Waiver{}, false
}

// Lists are the pattern lists of `allowed:` or `denied:`; nil is a list
// the document leaves out.
type Lists struct {
	Namespaces         *Patterns
	CRDGroups          *Patterns
	ClusterScopedKinds *Patterns
	Registries         *Patterns
	// Commands bound the command text of actions (waits are not
	// commands: only allowed.actions bounds them).
	Commands *Patterns
	// HostPaths are path prefixes bounding the files zarf writes on the
	// deploying host and their symlinks.
	HostPaths *Patterns
}

// listField is one list field of `allowed:` and `denied:`: its key, the
// claim kind it bounds, and whether it holds host path prefixes rather
// than globs.
type listField struct {
	key   string
	kind  string
	paths bool
	of    func(*Lists) **Patterns
}

var listFields = []listField{
	{"namespaces", facts.ClaimNamespaces, false, func(l *Lists) **Patterns { return &l.Namespaces }},
	{"crd_groups", facts.ClaimCRDs, false, func(l *Lists) **Patterns { return &l.CRDGroups }},
	{"cluster_scoped_kinds", facts.ClaimClusterScoped, false, func(l *Lists) **Patterns { return &l.ClusterScopedKinds }},
	{"registries", facts.ClaimImages, false, func(l *Lists) **Patterns { return &l.Registries }},
	{"commands", facts.ClaimActions, false, func(l *Lists) **Patterns { return &l.Commands }},
	{"host_paths", facts.ClaimHostFiles, true, func(l *Lists) **Patterns { return &l.HostPaths }},
}

// switchField is one boolean of `allowed:`: false bounds its claim kind.
type switchField struct {
	key  string
	kind string
	of   func(*Policy) **Switch
}

var switchFields = []switchField{
	{"cluster_rbac_wildcards", facts.ClaimClusterRBAC, func(p *Policy) **Switch { return &p.ClusterRBACWildcards }},
	{"actions", facts.ClaimActions, func(p *Policy) **Switch { return &p.Actions }},
	{"uncarried_images", facts.ClaimImages, func(p *Policy) **Switch { return &p.UncarriedImages }},
}

// Patterns is one list of the policy, each pattern with its line. A glob
// list's * matches any run of characters; a host_paths list holds path
// prefixes (Match).
type Patterns struct {
	Field string // "allowed.namespaces"
	Line  int    // the line of the field
	items []pattern
	paths bool
}

type pattern struct {
	text string
	line int
	re   *regexp.Regexp
	// prefix is a host path prefix, cleaned (host_paths only).
	prefix string
}

// all says the pattern matches everything: it is only stars.
func (it pattern) all() bool { return strings.Trim(it.text, "*") == "" }

// Switch is one boolean of the policy.
type Switch struct {
	Field string
	Line  int
	Value bool
}

// Match returns the first pattern s matches, with its line. In a
// host_paths list, s is a cleaned absolute path and a prefix matches it
// path by path: "/opt/zarf" matches "/opt/zarf" and "/opt/zarf/a", not
// "/opt/zarfx".
func (p *Patterns) Match(s string) (pattern string, line int, ok bool) {
	for _, it := range p.items {
		if p.matches(it, s) {
			return it.text, it.line, true
		}
	}
	return "", 0, false
}

func (p *Patterns) matches(it pattern, s string) bool {
	switch {
	case it.all():
		return true
	case p.paths:
		return s == it.prefix || it.prefix == "/" || strings.HasPrefix(s, it.prefix+"/")
	default:
		return it.re.MatchString(s)
	}
}

// Any says the list holds a pattern that matches everything ("*", or
// only stars). Such an allowed list is no bound: every known claim
// matches it, and an unknown one is not refused for it.
func (p *Patterns) Any() bool {
	for _, it := range p.items {
		if it.all() {
			return true
		}
	}
	return false
}

// allows says the list is an allowed list that bounds its claims.
func (p *Patterns) allows() bool { return p != nil && !p.Any() }

// denies says the list is a denied list that refuses something.
func (p *Patterns) denies() bool { return p != nil && len(p.items) > 0 }

// where is the field's place in the file, for messages:
// "policy.yaml line 7 (allowed.namespaces: [gadgets, team-*])".
func (p *Patterns) where(file string) string {
	var texts []string
	for _, it := range p.items {
		texts = append(texts, it.text)
	}
	return fmt.Sprintf("%s line %d (%s: [%s])", file, p.Line, p.Field, strings.Join(texts, ", "))
}

// denial names the pattern of a denied list that matched, at its line:
// "denied by policy.yaml line 9 (denied.namespaces: [kube-system])".
func (p *Patterns) denial(file, pat string, line int) string {
	return fmt.Sprintf("denied by %s line %d (%s: [%s])", file, line, p.Field, pat)
}

// where is the switch's place in the file:
// "policy.yaml line 8 (allowed.actions: false)".
func (s *Switch) where(file string) string {
	return fmt.Sprintf("%s line %d (%s: %t)", file, s.Line, s.Field, s.Value)
}

// forbids says the switch is set to false.
func (s *Switch) forbids() bool { return s != nil && !s.Value }

// FieldError is a problem with one field of a policy document.
type FieldError struct {
	Field   string
	Line    int
	Problem string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return fmt.Sprintf("line %d, field %s: %s", e.Line, e.Field, e.Problem)
}

func keys(denied bool) string {
	var ks []string
	for _, f := range listFields {
		ks = append(ks, f.key)
	}
	if !denied {
		for _, f := range switchFields {
			ks = append(ks, f.key)
		}
	}
	return strings.Join(ks, ", ")
}

// Decode reads a policy document strictly: a key given twice, an unknown field,
// an unknown apiVersion or kind, a value of the wrong type, an empty
// pattern or a host path that is not absolute is an error naming its
// line and field. A document needs `allowed:`, `denied:` or both. file
// names the document in messages.
func Decode(b []byte, file string) (*Policy, error) {
	if len(b) > MaxSize {
		return nil, &FieldError{Problem: fmt.Sprintf("the policy is %d bytes, more than the %d allowed", len(b), MaxSize)}
	}
	if err := facts.CheckShape(b, policyShape); err != nil {
		return nil, &FieldError{Problem: "the policy " + err.Error()}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, &FieldError{Problem: "the policy is not valid YAML: " + facts.Printable(err.Error())}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &FieldError{Problem: "the policy must be one YAML mapping"}
	}
	p := &Policy{File: file}
	top := doc.Content[0]
	seen := map[string]bool{}
	err := eachKey(top, func(k, v *yaml.Node) error {
		seen[k.Value] = true
		switch k.Value {
		case "apiVersion":
			if v.Value != APIVersion {
				return &FieldError{Field: "apiVersion", Line: k.Line, Problem: fmt.Sprintf("%s is not %s", facts.Quote(v.Value), APIVersion)}
			}
		case "kind":
			if v.Value != Kind {
				return &FieldError{Field: "kind", Line: k.Line, Problem: fmt.Sprintf("%s is not %s", facts.Quote(v.Value), Kind)}
			}
		case "allowed":
			return p.lists(v, "allowed", &p.Allowed)
		case "denied":
			return p.lists(v, "denied", &p.Denied)
		case "crd_upgrade_waivers":
			return p.waivers(v)
		default:
			return &FieldError{Field: facts.Printable(k.Value), Line: k.Line, Problem: "is not a policy field (apiVersion, kind, allowed, denied, crd_upgrade_waivers)"}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"apiVersion", "kind"} {
		if !seen[f] {
			return nil, &FieldError{Field: f, Line: top.Line, Problem: "is missing"}
		}
	}
	if !seen["allowed"] && !seen["denied"] && !seen["crd_upgrade_waivers"] {
		return nil, &FieldError{Field: "allowed", Line: top.Line, Problem: "is missing: a policy bounds claims with allowed, denied or both, or waives CRD upgrade checks (crd_upgrade_waivers)"}
	}
	return p, nil
}

// maxReason caps a waiver's reason.
const maxReason = 512

// waivers decodes crd_upgrade_waivers: a list of {crd, reason}, both
// required, the CRD a DNS subdomain named once, the reason printable.
func (p *Policy) waivers(n *yaml.Node) error {
	const field = "crd_upgrade_waivers"
	if n.Kind != yaml.SequenceNode {
		return &FieldError{Field: field, Line: n.Line, Problem: "must be a list of {crd, reason}"}
	}
	p.CRDUpgradeWaivers = []Waiver{}
	for i, it := range n.Content {
		at := fmt.Sprintf("%s[%d]", field, i)
		if it.Kind != yaml.MappingNode {
			return &FieldError{Field: at, Line: it.Line, Problem: "must be a mapping of crd and reason"}
		}
		w := Waiver{Line: it.Line}
		err := eachKey(it, func(k, v *yaml.Node) error {
			str := v.Kind == yaml.ScalarNode && v.Tag == "!!str" && v.Value != "" && facts.Printable(v.Value) == v.Value && len(v.Value) <= maxReason
			switch k.Value {
			case "crd":
				if !str || facts.CheckCRDName(v.Value) != nil {
					return &FieldError{Field: at + ".crd", Line: k.Line, Problem: "must be a CRD's name (plural.group, a DNS subdomain)"}
				}
				w.CRD = v.Value
			case "reason":
				if !str {
					return &FieldError{Field: at + ".reason", Line: k.Line, Problem: fmt.Sprintf("must be a non-empty string of printable characters, at most %d bytes: say why the check is waived", maxReason)}
				}
				w.Reason = v.Value
			default:
				return &FieldError{Field: at + "." + facts.Printable(k.Value), Line: k.Line, Problem: "is not a field of a waiver (crd, reason)"}
			}
			return nil
		})
		if err != nil {
			return err
		}
		switch {
		case w.CRD == "":
			return &FieldError{Field: at + ".crd", Line: it.Line, Problem: "is missing"}
		case w.Reason == "":
			return &FieldError{Field: at + ".reason", Line: it.Line, Problem: "is missing: a waiver says why"}
		}
		if _, dup := p.Waived(w.CRD); dup {
			return &FieldError{Field: at + ".crd", Line: it.Line, Problem: fmt.Sprintf("%s is waived twice", w.CRD)}
		}
		p.CRDUpgradeWaivers = append(p.CRDUpgradeWaivers, w)
	}
	return nil
}

// eachKey calls f on each key of a mapping and its value, in order.
// (A key given twice is refused before, by facts.CheckShape.)
func eachKey(n *yaml.Node, f func(k, v *yaml.Node) error) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if err := f(n.Content[i], n.Content[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// lists decodes `allowed:` or `denied:` (name) into l; the switches are
// allowed's alone.
func (p *Policy) lists(n *yaml.Node, name string, l *Lists) error {
	denied := name == "denied"
	if n.Kind != yaml.MappingNode {
		return &FieldError{Field: name, Line: n.Line, Problem: "must be a mapping of " + keys(denied)}
	}
	return eachKey(n, func(k, v *yaml.Node) error {
		field := name + "." + facts.Printable(k.Value)
		for _, f := range listFields {
			if f.key == k.Value {
				pats, err := decodePatterns(field, k, v, f.paths)
				*f.of(l) = pats
				return err
			}
		}
		for _, f := range switchFields {
			if f.key == k.Value && !denied {
				var b bool
				if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
					return &FieldError{Field: field, Line: k.Line, Problem: "must be true or false"}
				}
				*f.of(p) = &Switch{Field: field, Line: k.Line, Value: b}
				return nil
			}
		}
		return &FieldError{Field: field, Line: k.Line, Problem: "is not a field of " + name + " (" + keys(denied) + ")"}
	})
}

func decodePatterns(field string, k, v *yaml.Node, paths bool) (*Patterns, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, &FieldError{Field: field, Line: k.Line, Problem: "must be a list of patterns"}
	}
	pats := &Patterns{Field: field, Line: k.Line, paths: paths}
	for j, it := range v.Content {
		at := fmt.Sprintf("%s[%d]", field, j)
		if it.Kind != yaml.ScalarNode || it.Tag != "!!str" || it.Value == "" || facts.Printable(it.Value) != it.Value || len(it.Value) > 512 {
			return nil, &FieldError{Field: at, Line: it.Line, Problem: "must be a non-empty string of printable characters, at most 512 bytes"}
		}
		pat := pattern{text: it.Value, line: it.Line}
		switch {
		case pat.all():
		case paths:
			if !strings.HasPrefix(it.Value, "/") {
				return nil, &FieldError{Field: at, Line: it.Line, Problem: "must be an absolute path (a relative one would be relative to wherever zarf runs), or * for any"}
			}
			if strings.Contains(it.Value, "*") {
				return nil, &FieldError{Field: at, Line: it.Line, Problem: "is a path prefix, not a pattern: * stands only alone"}
			}
			pat.prefix = path.Clean(it.Value)
		default:
			re, err := glob(it.Value)
			if err != nil {
				return nil, &FieldError{Field: at, Line: it.Line, Problem: err.Error()}
			}
			pat.re = re
		}
		pats.items = append(pats.items, pat)
	}
	return pats, nil
}

// glob compiles a pattern in which * matches any run of characters and
// everything else matches itself.
func glob(s string) (*regexp.Regexp, error) {
	parts := strings.Split(s, "*")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	re, err := regexp.Compile("^(?s:" + strings.Join(parts, ".*") + ")$")
	if err != nil {
		return nil, errors.New("is not a pattern")
	}
	return re, nil
}
