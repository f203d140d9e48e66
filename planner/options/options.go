// Package options declares every option of a plan request once: its one
// name, type, default, choices and help. The CLI's flags, the Ansible
// module's argument spec and documentation, the daemon's wire encoding and
// the planner all derive from these declarations, so an option added here
// reaches every front end without being written again.
//
// An option is a field of Plan (the operator's choices, which the planner
// reads), Read (how archives are read and judged), Cluster (which cluster
// a cluster-aware plan reads), Cache (whether answers may come from the
// cache), Saved (where a plan is saved to or replayed from) or Output
// (what the caller writes beside the document). Its `json` tag is its name
// everywhere: the module option, the JSON key, and (with dashes for
// underscores) the CLI flag. Other tags:
//
//	help     one or two sentences for the CLI's help and the module's doc
//	type     "path" for a string that names a file (made absolute by callers);
//	         "mode" for a file's mode in octal (ParseFileMode)
//	content  on a path: the file's content decides the plan, not only its
//	         name, so every key of a plan and the saved plan hash it (see
//	         Files); the value is the most bytes it may hold ("64KiB")
//	dir      on a content path: it may name a directory, whose YAML
//	         files (*.yaml, *.yml, directly inside) are its content
//	carry    on a path (or path list) whose content decides no plan but
//	         is needed to make one (a CA bundle, an approval key): the
//	         caller reads it as content is read and sends its bytes; the
//	         value is the most bytes each file may hold
//	opens    on any other path: who opens it, "daemon" (the directories
//	         it plans, its own cache) or "caller" (the files the caller
//	         writes, or reads and sends in a field of its own)
//
// Who opens a file is declared, never decided by the code that uses it:
// a content or carry option is opened once, by the caller, as the
// caller, through the one reader (package carry), and travels as bytes;
// the daemon opens no path a caller names except those declared
// opens:"daemon". Every path option declares exactly one of the three
// (the package's tests refuse one that does not).
//
//	default  the value when the option is not given, as text
//	choices  the allowed values, comma-separated
//	names    what of the value is a package name: "items" (of a list),
//	         "keys" or "values" (of a map); shell completion offers the
//	         package names of the sources given there
//	alias    former spellings, comma-separated, accepted for one release;
//	         a leading "!" marks a CLI flag that sets a bool to false
//	option   "-" on a field that travels with the request but is set by
//	         the caller, never by an operator: it declares no option
//
// It is pure: it opens no file and reads no environment.
package options

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Plan is what the operator chooses about a plan. The planner reads these.
// The fields' order is the order of the JSON the plan digest hashes, so a
// new option goes at the end.
type Plan struct {
	Architecture string `json:"architecture,omitempty" alias:"arch" help:"Plan only archives built for this architecture. Default: this host's; in cluster mode, the nodes'."`
	Flavor       string `json:"flavor,omitempty" help:"Flavor to choose when one package name and version is present in several flavors."`
	// Select and Priorities settle alternative groups and alias sets.
	Select      map[string]string `json:"select,omitempty" names:"values" help:"Settle an alternative group (key: its id) or an alias set (key: its names joined with commas) on one package name. Wins over cluster precedence and priorities."`
	Priorities  map[string]int    `json:"priorities,omitempty" alias:"priority" names:"keys" help:"Priority per package name inside alternative groups and alias sets (higher wins), overriding the priority a requirement declares."`
	Packages    []string          `json:"packages,omitempty" names:"items" help:"Plan only these package names and everything they need. By default every package in the directory is planned, except those that lost an alternative group."`
	Exclude     []string          `json:"exclude,omitempty" names:"items" help:"Never plan these package names. Planning fails, saying why, if something needs them."`
	Constraints map[string]string `json:"constraints,omitempty" alias:"constraint" names:"keys" help:"Pin package names to a semver range (Masterminds syntax), as one more consumer would; cited as requested by the operator."`
	Force       []string          `json:"force,omitempty" names:"items" help:"Plan these package names even when a cluster-aware plan would skip them as already installed."`
	// VersionStrategy is StrategyNewestSatisfying or StrategyNewestOnly.
	VersionStrategy string `json:"version_strategy,omitempty" choices:"newest_satisfying,newest_only" default:"newest_satisfying" help:"newest_satisfying picks, per name, the newest version every planned consumer accepts, stepping down when needed; newest_only allows only the newest version and fails instead of stepping down."`
	// Mode is ModeStandalone or ModeCluster.
	Mode           string `json:"mode,omitempty" choices:"standalone,cluster" help:"standalone: the directory must be self-contained. cluster: read the target cluster (or a snapshot) first; what is installed, healthy and of the same build is not deployed again. Default: standalone, or cluster when a snapshot is given."`
	AllowDowngrade bool   `json:"allow_downgrade,omitempty" help:"In cluster mode, allow planning an older version than the one installed."`
	// Prereleases names the packages whose prerelease versions (such as
	// UDS-style 1.14.0-uds.1) satisfy constraints that name no prerelease.
	Prereleases []string `json:"prereleases,omitempty" names:"items" help:"Package names whose prerelease versions (such as 1.14.0-uds.1) satisfy version ranges that name no prerelease; semver otherwise leaves them out."`
	// Requirements is RequirementsInferred or RequirementsDeclared.
	Requirements string `json:"requirements,omitempty" choices:"declared_and_inferred,declared" default:"declared_and_inferred" help:"declared_and_inferred: a package also requires what its objects use (the CRD of each custom resource, the storage class of each claim, the priority class of each pod), inferred from what it ships, whether or not it carries a document. declared: only what the PackagePrerequisites documents (the archives' and the operator's) declare."`
}

// Modes.
const (
	ModeStandalone = "standalone"
	ModeCluster    = "cluster"
)

// What a package requires (Plan.Requirements).
const (
	// RequirementsInferred: what its document declares, and what its
	// objects use (the default).
	RequirementsInferred = "declared_and_inferred"
	// RequirementsDeclared: only what its document declares.
	RequirementsDeclared = "declared"
)

// Version strategies.
const (
	// StrategyNewestSatisfying picks, per name, the newest version that
	// satisfies every planned consumer, stepping down when needed.
	StrategyNewestSatisfying = "newest_satisfying"
	// StrategyNewestOnly allows only the newest version of each name and
	// fails instead of stepping down.
	StrategyNewestOnly = "newest_only"
)

// Cluster names the cluster a cluster-aware plan (or a readiness barrier)
// reads.
type Cluster struct {
	Kubeconfig string `json:"kubeconfig,omitempty" type:"path" opens:"daemon" help:"Kubeconfig of the target cluster. Default: K8S_AUTH_KUBECONFIG, then the files KUBECONFIG lists, merged as kubectl merges them (the first file to set a value wins), then ~/.kube/config, where the module or CLI runs; the daemon is always sent these paths, never reading its own environment. A plan that reads no live cluster (standalone, or against a snapshot) does not use it: refused with mode standalone given, else warned about."`
	Context    string `json:"context,omitempty" help:"Kubeconfig context to use. Default: K8S_AUTH_CONTEXT, then the kubeconfig's current context (the first file's that sets one, of several). A plan that reads no live cluster does not use it: refused with mode standalone given, else warned about."`
	// KubeconfigPrecedence is the caller's KUBECONFIG, its files in
	// order and made absolute, when no kubeconfig is given: they are
	// loaded as kubectl loads them (client-go's loading rules, merged).
	// The caller sets it (caller.Cluster), never an operator, so it is no
	// option (tag option:"-"); it travels with the request because the
	// daemon never reads its own environment.
	KubeconfigPrecedence []string `json:"kubeconfig_precedence,omitempty" option:"-"`
}

// Cache says how archives are read.
type Cache struct {
	CacheDir string `json:"cache_dir,omitempty" type:"path" opens:"daemon" help:"Archive cache directory. Default: ZARF_PLANNER_CACHE_DIR, else under the user cache directory. Unchanged archives are answered from it by their stat alone."`
	UseCache bool   `json:"use_cache" default:"true" alias:"!no-cache" help:"Set to false to read every archive, neither using nor filling the cache (nor reusing a remembered plan)."`
}

// Read says how archives are read and judged.
type Read struct {
	MaxInflation int    `json:"max_inflation,omitempty" default:"100" help:"How many times what it stores on disk (beyond 1 GiB; a sparse file's holes are not stored) an archive may decompress to before it is refused as a decompression bomb; also how many times its bytes that carry data (beyond 16 MiB) those that carry none may be (skippable zstd frames, bytes after its tar stream)."`
	Integrity    string `json:"integrity,omitempty" choices:"warn,fail" default:"warn" help:"warn: an archive that fails an integrity check, cannot be read whole or is over a limit is left out with a warning. fail: it fails the plan, so nothing is deployed from a directory holding one."`
	// PublicKey and RequireSignatures check who built the archives.
	PublicKey         string `json:"public_key,omitempty" type:"path" content:"64KiB" help:"A cosign public key (PEM, as zarf tools gen-key writes cosign.pub). Every signed archive's signature (zarf.bundle.sig, or a legacy zarf.yaml.sig) must verify with it, as zarf package deploy --key checks, or the plan fails naming the archive; an unsigned archive is a warning."`
	RequireSignatures bool   `json:"require_signatures,omitempty" help:"Fail the plan on any archive that is not signed by public_key (which this requires), before anything is deployed."`
	// PlainHTTP, InsecureSkipTLSVerify, RegistryCAFile and
	// RegistryTimeout reach the registry of a registry source (oci://).
	PlainHTTP             bool   `json:"plain_http,omitempty" help:"Reach the registry of an oci:// source over plain HTTP, as zarf's --plain-http (never needed for a directory)."`
	InsecureSkipTLSVerify bool   `json:"insecure_skip_tls_verify,omitempty" help:"Do not check the TLS certificate of the registry of an oci:// source, as zarf's --insecure-skip-tls-verify."`
	RegistryCAFile        string `json:"registry_ca_file,omitempty" type:"path" carry:"1MiB" help:"A PEM bundle of CAs trusted, beside the system's, for the registry of an oci:// source."`
	RegistryTimeout       int    `json:"registry_timeout,omitempty" type:"seconds" default:"30" help:"How long the registry of an oci:// source may stay silent (before answering, or in the middle of a body) before the read fails naming it; 429 and 5xx answers are retried with backoff first."`
	// RenderBudget bounds what a request's charts and manifests cost
	// together.
	RenderBudget int `json:"render_budget,omitempty" type:"seconds" default:"120" help:"How long the charts and manifests of one request (a plan, catalog, inspection or warm-up, over all its archives and sources) may take together to render and to be read (what charts rendered, and the manifests packages ship); rendering takes one core, so this bounds their CPU too. Past it the request fails naming it, with how many charts and manifest files spent it; nothing it cut short is cached. Each chart is also bounded by itself (10 s) and each archive's charts together (30 s)."`
	// ReadBudget bounds what a request's archives decompress to together.
	ReadBudget int `json:"read_budget,omitempty" default:"16" help:"How many GiB more than they store on disk the archives of one request (a plan, catalog, inspection or warm-up, over all its sources) may decompress to together. Zarf packages are mostly images, whose layers are compressed already, so a real one decompresses to about what it stores; this bounds what a directory of decompression bombs costs (seconds of a core: 16 GiB of zeros takes about 3), beside each archive's own bound (max_inflation). Past it the request fails naming it and the archive being read; nothing it cut short is cached. 0 means the default."`
	// Sources are read after the path, as one directory of packages.
	Sources []string `json:"sources,omitempty" type:"path" opens:"daemon" help:"More sources to plan from, after the path: directories and registry sources (oci://HOST/NAMESPACE) or references (oci://HOST/NAMESPACE/NAME:TAG or @sha256:...), mixed as needed. Their packages are planned together, as if in one directory. One name, version, architecture and flavor found in two of them is one package when both carry the same contents (the same zarf.yaml aggregate checksum): it is planned from the first source given, the other left out with a warning; otherwise the plan fails as ambiguous. A plan of several sources is never answered from a kept plan; a saved one replays from the same registry sources, its directories compared by their archives' names (they may be mounted elsewhere)."`
	// Offline plans a registry source from the cache alone.
	Offline bool   `json:"offline,omitempty" help:"Plan an oci:// source from the cache alone, reaching no registry: from the listing and the packages the last read of that source (zarf-planner cache warm, zarf_bundle_cache, or a plan) recorded. The plan warns that it is as of that listing's time; a source never read into the cache, or a package listed but collected since, fails the plan saying to warm it. No effect on a directory."`
	Policy  string `json:"policy,omitempty" type:"path" content:"1MiB" help:"A maximal policy (YAML, schema docs/policy.schema.json): what packages may claim (allowed) and may not (denied, which wins) on the cluster and the deploying host: namespaces, CRD groups, cluster-scoped kinds, image registries and images not carried, cluster-wide RBAC wildcards, onDeploy and onRemove actions and their commands, host file paths. The plan fails, naming each package, claim, object and policy line, when a package it would deploy claims beyond it; an unknown claim only when a field bounds a kind it may affect."`
	// Prerequisites are the operator's PackagePrerequisites documents.
	Prerequisites string `json:"prerequisites,omitempty" type:"path" content:"4MiB" dir:"yaml" help:"The operator's PackagePrerequisites documents: a YAML file of one or more (separated by ---), or a directory of such files (*.yaml, *.yml, directly inside). Each names a package (metadata.package) and, optionally, the versions it applies to (metadata.version, a semver range), and replaces, for those archives, the document the archive carries: what it requires, provides and assumes is the operator's. Requirements inferred from what a package uses are still added, unless its document assumes them (assumes). Two documents for one archive fail the plan (kind invalid); one that matches no archive is a warning."`
	// AllowEmpty accepts sources that hold no Zarf package archive.
	AllowEmpty bool `json:"allow_empty,omitempty" help:"Accept sources that hold no Zarf package archive: the plan then deploys nothing. Without it such a plan fails (kind empty), naming the directory and what it holds, so an empty or wrong bundle directory is never a green run. Sources whose every package archive was left out as unusable fail either way."`
}

// Integrity policies.
const (
	IntegrityWarn = "warn"
	IntegrityFail = "fail"
)

// Output says what a plan request writes beside its document, where the
// module or the CLI runs. It changes no plan.
//
// Its paths carry no content tag: they are outputs, written and never
// read, so what they hold decides nothing.
type Output struct {
	ReportHTML string `json:"html_to,omitempty" type:"path" opens:"caller" alias:"report_html" help:"Also write the plan as one self-contained HTML page (the graph by levels, every package's reasons, barrier and sha256; a failure drawn as well as told) to this file, on the host where the module or CLI runs. Its directory must exist; the file is replaced whole, and only when its content changes: a page that differs from the file only in the time it states leaves the file as it is (changed is false). The time it states is SOURCE_DATE_EPOCH when set, else the time of the call."`
	// FileMode is named file_mode, not Ansible's mode: mode is the
	// planning mode (standalone or cluster).
	FileMode string `json:"file_mode,omitempty" type:"mode" help:"The mode of the files written (save_to, html_to), in octal as Ansible's mode is written ('0640'; a number YAML reads as octal, such as 0640 unquoted, is taken too). Default: 0600, the owner's alone, since they can hold what the cluster holds. Applied to a file already there as well, rewritten with its mode when only the mode differs. Only read, write and execute bits, and never write for others."`
}

// Request is every option of a plan request, by group.
type Request struct {
	Plan
	Read
	// Snapshot is a saved cluster snapshot to plan against instead of a
	// live cluster.
	Snapshot string `json:"snapshot,omitempty" type:"path" content:"64MiB" alias:"installed" help:"A snapshot saved with zarf-planner snapshot -o json, to plan cluster-aware where the cluster cannot be reached. Implies cluster mode."`
	Cluster
	Cache
	Saved
	Approvals
	Output
}

// Approvals say who must have approved a saved plan before it is
// replayed: a change board's members sign the plan file (zarf-planner
// approve, or plan --sign-with), and a replay (plan_file) checks that
// enough of the keys listed here signed exactly its bytes. They decide no
// plan: they decide whether a saved one may be replayed.
type Approvals struct {
	ApprovalKeys     []string `json:"approval_keys,omitempty" type:"path" carry:"64KiB" help:"Public keys (cosign.pub, PEM) of the change board: with plan_file, an approval counts only when one of these keys made it, and require_approvals of them must have signed the saved plan's exact bytes (approvals are the files PLAN.approved-by-*.sigstore.json beside it). A plan edited after signing is approved by no one."`
	RequireApprovals int      `json:"require_approvals,omitempty" help:"With plan_file: how many distinct keys of approval_keys must have signed the saved plan; the replay fails (kind signature) naming which keys signed and which did not. 0: approvals are not required (those present are still checked and named)."`
}

// Saved says where a plan is saved to, or replayed from. Both are files
// where the module or CLI runs; the daemon builds and checks the saved
// plan, the caller reads and writes the file.
//
// Neither carries a content tag: save_to is an output; plan_file is not an
// input of the plan but the record it is checked against (the replay
// compares the file's every field with the plan made now, and a plan made
// with a plan_file is never kept or memoized).
type Saved struct {
	SaveTo   string `json:"save_to,omitempty" type:"path" opens:"caller" help:"Also write the plan to this file as a saved plan (the result, every archive's path, size and sha256, the options, the planner's release, the cluster snapshot it assumed) for review and a later replay with plan_file. Replaced whole, and only when its content changes. Not written when no plan is possible."`
	PlanFile string `json:"plan_file,omitempty" type:"path" opens:"caller" help:"Replay a saved plan: check it against the directory and the cluster now, and answer with the plan made now, whose decisions are the saved ones (never the file's bytes), or fail naming every difference (an archive replaced, added or removed, an installed package changed, an option that differs, another planner release). Options not given are the saved ones."`
}

// Kind is the type of an option's value.
type Kind string

// Kinds.
const (
	String Kind = "str"
	Path   Kind = "path"
	Bool   Kind = "bool"
	Int    Kind = "int"
	// Duration is a duration in whole seconds (an int field tagged
	// type:"seconds"): whole seconds for a module and on the wire, a Go
	// duration on the CLI (docs/vocabulary.md's duration rule).
	Duration  Kind = "seconds"
	List      Kind = "list"       // of strings
	PathList  Kind = "path_list"  // of paths
	StringMap Kind = "string_map" // string → string
	IntMap    Kind = "int_map"    // string → int
	// FileMode is a file's mode in octal (a string field tagged
	// type:"mode"; ParseFileMode reads it): text on the CLI and the
	// wire; a module takes it as text or as the number YAML reads an
	// unquoted octal as (FileModeOfNumber), as Ansible's mode.
	FileMode Kind = "file_mode"
)

// Option is one declared option.
type Option struct {
	// Name is the option's one name: module option and JSON key.
	Name string
	Kind Kind
	Help string
	// Default is the value when the option is not given, as text ("" when
	// it has none).
	Default string
	Choices []string
	// Names says what of the value is a package name (tag names):
	// NamesItems, NamesKeys or NamesValues; "" for none.
	Names string
	// Aliases are former names, accepted for one release.
	Aliases []string
	// NegatedAlias is a former CLI flag that sets this bool to false.
	NegatedAlias string
	// Content says a path option's file content decides the plan, not
	// only its name (tag content); MaxContent is the most bytes it may
	// hold (0: the tag's size is malformed, which the package's tests
	// refuse).
	Content    bool
	MaxContent int64
	// Dir says a content option may name a directory (tag dir): its
	// YAML files (*.yaml, *.yml) directly inside it are its content.
	Dir bool
	// Carry says the caller reads a path's (or each of a path list's)
	// files and sends their bytes, though they decide no plan (tag
	// carry); MaxContent is then the bound of each.
	Carry bool
	// Opens is who opens a path option's file that is neither content
	// nor carried (tag opens): OpensDaemon or OpensCaller.
	Opens string
	index []int
}

// What of an option's value is a package name (Option.Names).
const (
	// NamesItems: each item of a list.
	NamesItems = "items"
	// NamesKeys: each key of a map (a name's priority, its range).
	NamesKeys = "keys"
	// NamesValues: each value of a map (the package a group settles on).
	NamesValues = "values"
)

// Who opens a path option's file (Option.Opens).
const (
	// OpensDaemon: the daemon opens it (a directory it plans, its own
	// cache directory, the kubeconfig client-go reads).
	OpensDaemon = "daemon"
	// OpensCaller: the caller opens it and nothing of it reaches the
	// daemon but bytes in a field of their own (a saved plan replayed)
	// or nothing at all (a file it writes).
	OpensCaller = "caller"
)

// MaxCarriedList is the most files a carried path list (approval_keys)
// may name, so a request's carried bytes stay bounded (CarriedMax).
const MaxCarriedList = 64

// CarriedMax is the most bytes the carried files of a request of v's type
// may hold together: every carried option's bound, a path list's
// MaxCarriedList times.
func CarriedMax(v any) int64 {
	var n int64
	for _, o := range Of(v) {
		switch {
		case o.Carried() && o.Kind == PathList:
			n += MaxCarriedList * o.MaxContent
		case o.Carried():
			n += o.MaxContent
		}
	}
	return n
}

// Carried says the caller reads the option's files and sends their bytes
// (a content or carry option).
func (o Option) Carried() bool { return o.Content || o.Carry }

// Flag is the option's CLI flag name (without dashes in front).
func (o Option) Flag() string { return strings.ReplaceAll(o.Name, "_", "-") }

// Field returns the option's field in v, a struct value (or pointer to
// one) of the type the option was declared in.
func (o Option) Field(v reflect.Value) reflect.Value {
	return reflect.Indirect(v).FieldByIndex(o.index)
}

// DefaultValue is the declared default as a Go value of the option's kind
// (nil when it has none).
func (o Option) DefaultValue() any {
	if o.Default == "" {
		return nil
	}
	switch o.Kind {
	case Bool:
		b, _ := strconv.ParseBool(o.Default)
		return b
	case Int, Duration:
		n, _ := strconv.Atoi(o.Default)
		return n
	}
	return o.Default
}

var declared sync.Map // reflect.Type → []Option

// Of lists the options declared by the struct type of v (a value or a
// pointer), in field order, embedded groups in place.
func Of(v any) []Option {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opts, ok := declared.Load(t); ok {
		return opts.([]Option)
	}
	var opts []Option
	collect(t, nil, &opts)
	declared.Store(t, opts)
	return opts
}

// Find returns the option of that name (or alias) declared by v's type.
func Find(v any, name string) (Option, bool) {
	for _, o := range Of(v) {
		if o.Name == name || slices.Contains(o.Aliases, name) {
			return o, true
		}
	}
	return Option{}, false
}

func collect(t reflect.Type, index []int, out *[]Option) {
	for i := range t.NumField() {
		f := t.Field(i)
		idx := append(slices.Clip(index), i)
		if f.Anonymous {
			collect(f.Type, idx, out)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() || f.Tag.Get("option") == "-" {
			continue
		}
		o := Option{Name: name, Kind: kindOf(f), Help: f.Tag.Get("help"), Default: f.Tag.Get("default"), index: idx}
		if c := f.Tag.Get("choices"); c != "" {
			o.Choices = strings.Split(c, ",")
		}
		if c, ok := f.Tag.Lookup("content"); ok {
			o.Content, o.MaxContent = true, parseSize(c)
		}
		if c, ok := f.Tag.Lookup("carry"); ok {
			o.Carry, o.MaxContent = true, parseSize(c)
		}
		o.Dir = f.Tag.Get("dir") != ""
		o.Opens = f.Tag.Get("opens")
		o.Names = f.Tag.Get("names")
		for _, a := range strings.Split(f.Tag.Get("alias"), ",") {
			switch {
			case a == "":
			case strings.HasPrefix(a, "!"):
				o.NegatedAlias = a[1:]
			default:
				o.Aliases = append(o.Aliases, a)
			}
		}
		*out = append(*out, o)
	}
}

// parseSize reads a size such as "64KiB", "1MiB" or "512" (bytes); 0
// when it is none of those.
func parseSize(s string) int64 {
	unit := int64(1)
	for suffix, u := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			s, unit = n, u
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n * unit
}

// File is a file whose content decides the plan: the file a content
// option (Option.Content) names in a request.
type File struct {
	// Name is the option's name.
	Name string
	// Path is the file it names; "" when the option is not given.
	Path string
	// Max is the most bytes the file may hold (Option.MaxContent); a
	// directory's files, together.
	Max int64
	// Dir says Path may be a directory of such files (Option.Dir).
	Dir bool
	// Content says the file decides the plan (Option.Content): its sum
	// is in every key; a carried file that is not content (Option.Carry)
	// is read and sent the same way, and keyed by no one.
	Content bool
}

// Files lists the files of v (a value, or pointer to one, of a struct
// type declaring options) whose content decides the plan: one per content
// option its type declares, in declaration order, given or not. It reads
// none of them; those who key or record a plan hash what they hold.
func Files(v any) []File {
	rv := reflect.ValueOf(v)
	var files []File
	for _, o := range Of(v) {
		if o.Content {
			files = append(files, File{Name: o.Name, Path: o.Field(rv).String(), Max: o.MaxContent, Dir: o.Dir, Content: true})
		}
	}
	return files
}

// CarriedFiles lists the files of v the caller reads and sends (content
// and carry options, Option.Carried): one per option of a single path,
// given or not, and one per path given to a carried path list, in
// declaration order.
func CarriedFiles(v any) []File {
	rv := reflect.ValueOf(v)
	var files []File
	for _, o := range Of(v) {
		if !o.Carried() {
			continue
		}
		f := File{Name: o.Name, Max: o.MaxContent, Dir: o.Dir, Content: o.Content}
		if o.Kind == PathList {
			for _, p := range o.Field(rv).Interface().([]string) {
				f.Path = p
				files = append(files, f)
			}
			continue
		}
		f.Path = o.Field(rv).String()
		files = append(files, f)
	}
	return files
}

func kindOf(f reflect.StructField) Kind {
	switch t := f.Type; t.Kind() {
	case reflect.String:
		switch f.Tag.Get("type") {
		case "path":
			return Path
		case "mode":
			return FileMode
		}
		return String
	case reflect.Bool:
		return Bool
	case reflect.Int:
		if f.Tag.Get("type") == "seconds" {
			return Duration
		}
		return Int
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String && f.Tag.Get("type") == "path" {
			return PathList
		}
		if t.Elem().Kind() == reflect.String {
			return List
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String {
			return StringMap
		}
		if t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Int {
			return IntMap
		}
	}
	return "" // a declaration mistake: the package's tests refuse it
}

// Defaults returns a Request with every declared default set.
func Defaults() Request {
	var r Request
	SetDefaults(&r)
	return r
}

// SetDefaults sets every option of *ptr that has a declared default.
func SetDefaults(ptr any) {
	v := reflect.ValueOf(ptr)
	for _, o := range Of(ptr) {
		if d := o.DefaultValue(); d != nil {
			o.Field(v).Set(reflect.ValueOf(d).Convert(o.Field(v).Type()))
		}
	}
}

// Check reports the first option of *ptr whose value is not one of its
// choices, naming it the way caller gives it.
func Check(ptr any, caller Caller) error {
	v := reflect.ValueOf(ptr)
	for _, o := range Of(ptr) {
		if o.Carry && o.Kind == PathList {
			if n := o.Field(v).Len(); n > MaxCarriedList {
				return fmt.Errorf("%s names %d files; give at most %d", caller.Option(o.Name), n, MaxCarriedList)
			}
		}
		if len(o.Choices) == 0 {
			continue
		}
		s := o.Field(v).String()
		if s != "" && !slices.Contains(o.Choices, s) {
			return fmt.Errorf("%s is %q; use %s", caller.Option(o.Name), s, strings.Join(o.Choices, " or "))
		}
	}
	return nil
}
