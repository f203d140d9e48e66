// Package savedplan is the saved plan: a plan written to a file for a
// change board to review, and replayed later only if nothing it assumed
// has moved. It holds the result exactly as planned, and what the result
// was made from: the planner's release and build, the directory, every
// archive's path, size and sha256, the options, and in cluster mode the
// snapshot of the cluster. Compare names every way a plan made now differs
// from a saved one. It is pure: it reads no file and no cluster; the
// daemon's server builds both documents and decides.
package savedplan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// Identity of the document.
const (
	Kind       = "ZarfPlannerSavedPlan"
	APIVersion = "colonel-byte.dev/v1alpha1"
)

// MaxSize caps a saved plan read back (a plan of a thousand packages is
// about a megabyte).
const MaxSize = 64 << 20

// Doc is a saved plan.
type Doc struct {
	Kind       string  `json:"kind"`
	APIVersion string  `json:"apiVersion"`
	Planner    Planner `json:"planner"`
	// Directory is the directory planned (absolute).
	Directory string `json:"directory"`
	// Options are the request's options that decide a plan: the planner's
	// choices, how archives are read and judged, and the snapshot file.
	Options Options `json:"options"`
	// Archives are every archive of the directory the plan considered
	// (usable or not), in path order.
	Archives []Archive `json:"archives"`
	// KeyFingerprint names the public key (public_key) the signatures
	// were verified with, as plans and reports name it, for a reviewer;
	// Contents holds what its file held.
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
	// Contents are, by option name, the sha256 of the file each given
	// content option named (options.Files: the public key, the policy,
	// the snapshot), of the bytes the plan used.
	Contents map[string]string `json:"contents,omitempty"`
	// Cluster is the cluster a cluster-aware plan assumed; nil standalone.
	Cluster *facts.Cluster `json:"cluster"`
	// PlanDigest is the result's plan_digest.
	PlanDigest string `json:"plan_digest"`
	// Result is the output contract document, as it was returned.
	Result json.RawMessage `json:"result"`
}

// Planner names the binary that made the plan.
type Planner struct {
	Version string `json:"version"`
	Build   string `json:"build"`
}

// Options are the saved options: the Plan and Read groups and the
// snapshot. The Cluster group (a path on one host, a context name) and
// the Cache group do not decide a plan; the cluster's facts do, and they
// are saved apart.
type Options struct {
	options.Plan
	options.Read
	// Snapshot is declared as options.Request declares it (a test holds
	// the two to one declaration).
	Snapshot string `json:"snapshot,omitempty" type:"path" content:"64MiB"`
}

// OptionsOf keeps the options of a request a saved plan records.
func OptionsOf(o options.Request) Options {
	return Options{Plan: o.Plan, Read: o.Read, Snapshot: o.Snapshot}
}

// Archive states.
const (
	// StateCandidate is a readable Zarf package.
	StateCandidate = "candidate"
	// StateInvalid is a package whose prerequisites document is malformed.
	StateInvalid = "invalid"
	// StateUnusable is an archive that could not be used.
	StateUnusable = "unusable"
)

// Archive is one archive as the plan found it.
type Archive struct {
	Path string `json:"path"`
	// State is StateCandidate, StateInvalid or StateUnusable.
	State string `json:"state"`
	// Package and Version identify a candidate (Package also an invalid
	// one, when known).
	Package string `json:"package,omitempty"`
	Version string `json:"version,omitempty"`
	// Size and SHA256 are a candidate's bytes.
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Reason says why an archive is invalid or unusable.
	Reason string `json:"reason,omitempty"`
}

// Marshal renders a saved plan: indented for a reviewer, deterministic (no
// time, no map iteration), ending in a newline.
func (d *Doc) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("rendering the saved plan: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode reads a saved plan, strictly (package strictjson): every key
// must be one this release writes, given once and spelled exactly, in the
// plan and in its result, so what Ansible's Python reads of the file is
// what was checked here. name says which file it is.
func Decode(name string, r io.Reader) (*Doc, error) {
	var d Doc
	if err := strictjson.Read(name, r, MaxSize, &d); err != nil {
		return nil, fmt.Errorf("it is not a saved plan this release reads (%w); save the plan again with this release", err)
	}
	if d.Kind != Kind || d.APIVersion != APIVersion {
		return nil, fmt.Errorf("its kind is %q, apiVersion %q; a saved plan has kind %s, apiVersion %s", d.Kind, d.APIVersion, Kind, APIVersion)
	}
	if len(d.Result) == 0 || d.PlanDigest == "" {
		return nil, fmt.Errorf("it has no result or no plan_digest")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, d.Result); err != nil {
		return nil, fmt.Errorf("its result is not JSON: %v", err)
	}
	d.Result = compact.Bytes()
	return &d, nil
}

// Compare names every difference between a saved plan and the same plan
// made now, in words for the operator; none means the saved plan still
// holds. The caller names options the way it gives them.
func Compare(saved, now *Doc, caller options.Caller) []string {
	var diffs []string
	add := func(format string, a ...any) { diffs = append(diffs, fmt.Sprintf(format, a...)) }
	if saved.Planner != now.Planner {
		add("the planner: the plan was saved by zarf-planner %s (build %s), this is %s (build %s); plan again with this release", saved.Planner.Version, saved.Planner.Build, now.Planner.Version, now.Planner.Build)
	}
	// Where the directory and the files an option names are is the
	// host's business (a bundle carried across the gap is mounted
	// elsewhere): the directory is not compared, archives are compared by
	// their names in it, and files by their content.
	diffs = append(diffs, compareOptions(Effective(saved.Options), Effective(now.Options), caller)...)
	diffs = append(diffs, compareContents(saved, now, caller)...)
	diffs = append(diffs, compareArchives(archiveKeys(saved), saved.Archives, archiveKeys(now), now.Archives)...)
	diffs = append(diffs, compareCluster(saved.Cluster, now.Cluster)...)
	if len(diffs) > 0 {
		return diffs
	}
	// Everything it was made from is the same, so the plan is too; this
	// is a last guard, worded for the case nothing above explains.
	if saved.PlanDigest != now.PlanDigest {
		add("the plan: its digest was %s, the same request now gives %s", saved.PlanDigest, now.PlanDigest)
	}
	if s, n := decisions(saved.Result), decisions(now.Result); s != n {
		add("the plan: the packages to deploy, already installed or excluded now differ from the saved ones")
	}
	return diffs
}

// decisions is the part of a result a deployment follows: which archive
// is deployed in which step, how, after what and behind which barrier,
// and which are left out. Reasons are words (they name options the way the
// caller gives them), not decisions.
func decisions(result []byte) string {
	type pkg struct {
		Name    string          `json:"name"`
		Version string          `json:"version"`
		Path    string          `json:"path"`
		SHA256  string          `json:"sha256"`
		Level   int             `json:"level"`
		After   []string        `json:"after"`
		Action  string          `json:"action"`
		Barrier json.RawMessage `json:"barrier"`
	}
	var d struct {
		Failed    bool  `json:"failed"`
		Packages  []pkg `json:"zarf_packages_to_deploy"`
		Installed []pkg `json:"already_installed"`
		Excluded  []pkg `json:"excluded"`
	}
	if err := strictjson.UnmarshalPart("the result", result, &d); err != nil {
		return "unreadable: " + err.Error()
	}
	// An archive is named by its name in the directory, wherever that is.
	for _, l := range [][]pkg{d.Packages, d.Installed, d.Excluded} {
		for i := range l {
			l[i].Path = filepath.Base(l[i].Path)
		}
	}
	b, _ := json.Marshal(d) // plain values: cannot fail
	return string(b)
}

// Effective is o as the planner reads it: every option not given takes
// its declared default, so a default given explicitly is no difference.
// (The architecture's default is the host's or the nodes': the daemon
// records the one it planned for.)
func Effective(o Options) Options {
	v := reflect.ValueOf(&o)
	for _, opt := range options.Of(&o) {
		if d := opt.DefaultValue(); d != nil && empty(opt.Field(v).Interface()) {
			opt.Field(v).Set(reflect.ValueOf(d).Convert(opt.Field(v).Type()))
		}
	}
	return o
}

// compareOptions names each option whose value differs, except those
// naming a file: a file is compared by its content (compareContents),
// wherever it is.
func compareOptions(saved, now Options, caller options.Caller) []string {
	var diffs []string
	sv, nv := reflect.ValueOf(&saved), reflect.ValueOf(&now)
	for _, o := range options.Of(&saved) {
		if o.Kind == options.Path {
			continue
		}
		a, b := o.Field(sv).Interface(), o.Field(nv).Interface()
		if o.Name == "sources" {
			a, b = sourceShape(a), sourceShape(b)
		}
		if reflect.DeepEqual(a, b) || (empty(a) && empty(b)) {
			continue
		}
		diffs = append(diffs, fmt.Sprintf("%s: the plan was saved with %s, this request gives %s", caller.Option(o.Name), show(a), show(b)))
	}
	return diffs
}

// empty is a value that means "not given": zero, or an empty list or map.
func empty(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.IsZero() || isSized(v) && rv.Len() == 0
}

func isSized(v any) bool {
	switch reflect.ValueOf(v).Kind() {
	case reflect.Map, reflect.Slice, reflect.String:
		return true
	}
	return false
}

func show(v any) string {
	if empty(v) {
		return "no value"
	}
	b, _ := json.Marshal(v) // option values: strings, ints, lists, maps
	return string(b)
}

// compareContents names each content option whose file held other bytes
// when the plan was saved, wherever either file is, or that names a file
// on one side only, in declaration order, then any option this release
// does not declare.
func compareContents(saved, now *Doc, caller options.Caller) []string {
	var names []string
	for _, f := range options.Files(Options{}) {
		names = append(names, f.Name)
	}
	var other []string
	for _, m := range []map[string]string{saved.Contents, now.Contents} {
		for name := range m {
			if !slices.Contains(names, name) && !slices.Contains(other, name) {
				other = append(other, name)
			}
		}
	}
	slices.Sort(other)
	var diffs []string
	for _, name := range append(names, other...) {
		s, n := saved.Contents[name], now.Contents[name]
		switch {
		case s == n:
		case n == "":
			diffs = append(diffs, fmt.Sprintf("%s: the plan was saved with a file of sha256 %s, this request gives none", caller.Option(name), s))
		case s == "":
			diffs = append(diffs, fmt.Sprintf("%s: the plan was saved without one, this request gives a file of sha256 %s", caller.Option(name), n))
		default:
			diffs = append(diffs, fmt.Sprintf("%s: the file's content was sha256 %s when the plan was saved, it is %s now", caller.Option(name), s, n))
		}
	}
	return diffs
}

// compareArchives compares archives by their keys (their names in the
// directory, which may be elsewhere now; see archiveKeys) and their
// bytes.
func compareArchives(savedKey func(string) string, saved []Archive, nowKey func(string) string, now []Archive) []string {
	var diffs []string
	byName := map[string]Archive{}
	for _, a := range now {
		byName[nowKey(a.Path)] = a
	}
	seen := map[string]bool{}
	for _, s := range saved {
		key, name := savedKey(s.Path), filepath.Base(s.Path)
		seen[key] = true
		n, ok := byName[key]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s %s was removed (it held %s)", what(s.Path), name, describe(s)))
		case n.SHA256 != s.SHA256 || n.Size != s.Size:
			diffs = append(diffs, fmt.Sprintf("%s %s was replaced: saved %s; now %s", what(s.Path), name, describe(s), describe(n)))
		case n.State != s.State || n.Package != s.Package || n.Version != s.Version || n.Reason != s.Reason:
			diffs = append(diffs, fmt.Sprintf("%s %s changed: saved %s (%s), now %s (%s)", what(s.Path), name, s.State, why(s), n.State, why(n)))
		}
	}
	for _, n := range now {
		if name := filepath.Base(n.Path); !seen[nowKey(n.Path)] {
			diffs = append(diffs, fmt.Sprintf("%s %s was added (%s)", what(n.Path), name, describe(n)))
		}
	}
	return diffs
}

// archiveKeys names a plan's archives as they are compared: by their
// names in the directory; of a plan of several sources (option sources),
// by the place of their source in the list and their name in it, so that
// two directories holding one file name are told apart and each may be
// elsewhere now.
func archiveKeys(d *Doc) func(path string) string {
	if len(d.Options.Sources) == 0 {
		return filepath.Base
	}
	sources := append([]string{d.Directory}, d.Options.Sources...)
	return func(path string) string {
		for i, s := range sources {
			if strings.HasPrefix(path, sourceRoot(s)) {
				return fmt.Sprintf("%d:%s", i, filepath.Base(path))
			}
		}
		return filepath.Base(path)
	}
}

// sourceRoot is what the paths a source holds begin with: a directory's
// path and a slash, a registry namespace's reference and a slash, or the
// repository of a tag or digest and an @ (its packages are pinned by
// digest).
func sourceRoot(s string) string {
	if !strings.HasPrefix(s, "oci://") {
		return strings.TrimSuffix(s, "/") + "/"
	}
	rest := strings.TrimPrefix(s, "oci://")
	host, repo, _ := strings.Cut(rest, "/")
	i := strings.LastIndexByte(repo, '/')
	if j := strings.IndexAny(repo[i+1:], ":@"); j >= 0 {
		return "oci://" + host + "/" + repo[:i+1+j] + "@"
	}
	return "oci://" + host + "/" + repo + "/"
}

// sourceShape is the list of sources as a replay compares it: a
// registry source as given (it names what is read), a directory as its
// place in the list alone (it may be mounted elsewhere now; its archives
// are compared by name).
func sourceShape(v any) any {
	list, _ := v.([]string)
	out := make([]string, len(list))
	for i, s := range list {
		if strings.HasPrefix(s, "oci://") {
			out[i] = s
		} else {
			out[i] = "a directory"
		}
	}
	return out
}

// what a saved archive is called: an archive of a directory, or a
// package published to a registry, named by its repository and digest
// under the namespace (a tag moved shows as one removed, one added).
func what(path string) string {
	if strings.HasPrefix(path, "oci://") {
		return "published package"
	}
	return "archive"
}

func ident(a Archive) string {
	switch {
	case a.Package != "" && a.Version != "":
		return a.Package + " " + a.Version
	case a.Package != "":
		return a.Package + " (" + a.State + ")"
	}
	return "an archive that is " + a.State
}

// describe says what an archive is, from what its record holds: who it
// is, its size and sha256 when it has them (a candidate), and, for an
// invalid or unusable one, why it is that. A field the record lacks is
// left out, never printed empty.
func describe(a Archive) string {
	s := ident(a)
	if a.Size > 0 {
		s += fmt.Sprintf(", %d bytes", a.Size)
	}
	if a.SHA256 != "" {
		s += ", sha256 " + a.SHA256
	}
	if a.State != StateCandidate && a.Reason != "" {
		s += ": " + a.Reason
	}
	return s
}

func why(a Archive) string {
	if a.Reason == "" {
		return ident(a)
	}
	return a.Reason
}

func compareCluster(saved, now *facts.Cluster) []string {
	switch {
	case saved == nil && now == nil:
		return nil
	case saved == nil:
		return []string{"the cluster: the plan was saved standalone, this request reads " + now.Where()}
	case now == nil:
		return []string{"the cluster: the plan was saved against " + saved.Where() + ", this request reads no cluster"}
	}
	var diffs []string
	add := func(format string, a ...any) { diffs = append(diffs, fmt.Sprintf(format, a...)) }
	where := now.Where()
	if saved.KubernetesVersion != now.KubernetesVersion {
		add("%s: Kubernetes was %s when the plan was saved, now %s", where, saved.KubernetesVersion, now.KubernetesVersion)
	}
	installed := map[string]facts.InstalledPackage{}
	for _, p := range now.Packages {
		installed[p.Name] = p
	}
	was := map[string]bool{}
	for _, s := range saved.Packages {
		was[s.Name] = true
		n, ok := installed[s.Name]
		if !ok {
			add("%s: package %s %s was installed when the plan was saved and is not now", where, s.Name, s.Version)
			continue
		}
		if s.Version != n.Version {
			add("%s: package %s was version %s when the plan was saved, now %s", where, s.Name, s.Version, n.Version)
		}
		if s.AggregateChecksum != n.AggregateChecksum {
			add("%s: package %s %s was build %s when the plan was saved, now build %s", where, s.Name, n.Version, s.AggregateChecksum, n.AggregateChecksum)
		}
		if s.Generation != n.Generation {
			add("%s: package %s was deployed again: generation %d when the plan was saved, now %d", where, s.Name, s.Generation, n.Generation)
		}
		if s.Healthy != n.Healthy {
			add("%s: package %s was %s when the plan was saved, now %s", where, s.Name, health(s), health(n))
		}
	}
	for _, n := range now.Packages {
		if !was[n.Name] {
			add("%s: package %s %s is installed now and was not when the plan was saved", where, n.Name, n.Version)
		}
	}
	for _, l := range []struct {
		what       string
		saved, now []string
	}{
		{"node architecture", saved.NodeArchitectures, now.NodeArchitectures},
		{"CRD", saved.CRDs, now.CRDs},
		{"storage class", saved.StorageClasses, now.StorageClasses},
		{"CSI driver", saved.CSIDrivers, now.CSIDrivers},
		{"namespace", saved.Namespaces, now.Namespaces},
		{"capability", saved.Capabilities, now.Capabilities},
	} {
		for _, s := range l.saved {
			if !slices.Contains(l.now, s) {
				add("%s: %s %s was there when the plan was saved and is gone", where, l.what, s)
			}
		}
		for _, n := range l.now {
			if !slices.Contains(l.saved, n) {
				add("%s: %s %s is there now and was not when the plan was saved", where, l.what, n)
			}
		}
	}
	diffs = append(diffs, compareRoles(where, saved, now)...)
	diffs = append(diffs, compareCRDs(where, saved, now)...)
	return diffs
}

// compareCRDs says how the cluster's CRD definitions, which the upgrades
// of the CRDs a plan ships were judged against, changed: a CRD's stored
// versions (status.storedVersions), its versions, scope, names or
// conversion, and the Services a conversion webhook may reach.
func compareCRDs(where string, saved, now *facts.Cluster) []string {
	var diffs []string
	add := func(format string, a ...any) { diffs = append(diffs, fmt.Sprintf(format, a...)) }
	if (saved.CRDDefinitions == nil) != (now.CRDDefinitions == nil) {
		read := map[bool]string{true: "read", false: "not read"}
		add("%s: the CRDs' definitions were %s when the plan was saved, %s now", where, read[saved.CRDDefinitions != nil], read[now.CRDDefinitions != nil])
	}
	byName := map[string]facts.ClusterCRD{}
	for _, c := range now.CRDDefinitions {
		byName[c.Name] = c
	}
	for _, s := range saved.CRDDefinitions {
		n, ok := byName[s.Name]
		switch {
		case !ok:
			if now.CRDDefinitions != nil {
				add("%s: the CRD %s was defined when the plan was saved and is not now", where, s.Name)
			}
		case !slices.Equal(s.StoredVersions, n.StoredVersions):
			add("%s: the CRD %s stored objects in %s when the plan was saved, now in %s", where, s.Name, strings.Join(s.StoredVersions, ", "), strings.Join(n.StoredVersions, ", "))
		case !reflect.DeepEqual(s, n):
			add("%s: the CRD %s changed (its versions, scope, names or conversion) since the plan was saved", where, s.Name)
		}
	}
	if (saved.Services == nil) != (now.Services == nil) || !slices.Equal(saved.Services, now.Services) && crdWebhooks(saved) {
		add("%s: the Services a CRD's conversion webhook may reach changed since the plan was saved", where)
	}
	return diffs
}

// crdWebhooks says a cluster's CRDs convert through a webhook's Service
// (so its Services decide an upgrade).
func crdWebhooks(c *facts.Cluster) bool {
	for _, d := range c.CRDDefinitions {
		if d.Conversion != nil && d.Conversion.Service != "" {
			return true
		}
	}
	return false
}

// compareRoles says how the cluster's ClusterRoles, which its
// cluster-wide bindings were resolved against, changed: whether they
// were read, and each role made, removed or changed (labels, rules,
// aggregation) since.
func compareRoles(where string, saved, now *facts.Cluster) []string {
	if (saved.ClusterRoles == nil) != (now.ClusterRoles == nil) {
		read := map[bool]string{true: "read", false: "not read"}
		return []string{fmt.Sprintf("%s: its ClusterRoles were %s when the plan was saved and are %s now", where, read[saved.ClusterRoles != nil], read[now.ClusterRoles != nil])}
	}
	byName := func(rs []facts.ClusterRole) map[string]facts.ClusterRole {
		m := map[string]facts.ClusterRole{}
		for _, r := range rs {
			m[r.Name] = r
		}
		return m
	}
	was, is := byName(saved.ClusterRoles), byName(now.ClusterRoles)
	var diffs []string
	for _, n := range slices.Sorted(maps.Keys(was)) {
		r, ok := is[n]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("%s: ClusterRole %s was there when the plan was saved and is gone", where, n))
		case !sameRole(was[n], r):
			diffs = append(diffs, fmt.Sprintf("%s: ClusterRole %s changed (its labels, rules or aggregation) since the plan was saved", where, n))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(is)) {
		if _, ok := was[n]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: ClusterRole %s is there now and was not when the plan was saved", where, n))
		}
	}
	return diffs
}

func sameRole(a, b facts.ClusterRole) bool {
	return slices.Equal(a.Labels, b.Labels) && a.Aggregates == b.Aggregates && slices.Equal(a.Selectors, b.Selectors) && slices.EqualFunc(a.Rules, b.Rules, facts.Rule.Equal)
}

func health(p facts.InstalledPackage) string {
	if p.Healthy {
		return "healthy"
	}
	return "unhealthy (" + strings.TrimSpace(p.Reason) + ")"
}
