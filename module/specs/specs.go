// Package specs declares the argument spec of each zarf-planner module:
// the plan module's options come from their declarations (package
// planner/options), the others are written here. The module binary
// validates with them and the documentation generator (module/docgen)
// documents them, so an option is described in one place.
package specs

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/module/ansible"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// common are the options every module accepts, so one module_defaults
// entry for the collection's action group sets them for all: where the
// daemon lives, which cluster, which cache. A module that has no use for
// one accepts it and says so in its documentation.
func common() map[string]ansible.Option {
	opts := map[string]ansible.Option{
		"daemon_path": {Type: ansible.TypePath, Description: "Path of the C(zarf-planner) daemon binary. Default - the one the collection installed beside the module on this host (see the collection README), else C(zarf-planner) in C(PATH). A binary another user owns or can write is refused."},
		"state_dir":   {Type: ansible.TypePath, Description: "Daemon state directory (state file, socket, log). Defaults to C($ZARF_PLANNER_STATE_DIR), else C($XDG_RUNTIME_DIR/zarf-planner), else the user cache directory."},
		"timeout":     {Type: ansible.TypeInt, Default: int64(300), Description: "Seconds the call may take, including starting the daemon. A call still running 45 seconds past it (a step stuck in the kernel), or 5 seconds past a SIGTERM, is ended by the module itself with a failure."},
	}
	maps.Copy(opts, declared(options.Cluster{}))
	for name, o := range declared(options.Cache{}) {
		if name == "cache_dir" {
			opts[name] = o
		}
	}
	return opts
}

// with is the common options, those a module has no use for saying so,
// and the module's own.
func with(unused []string, opts map[string]ansible.Option) map[string]ansible.Option {
	out := common()
	for _, name := range unused {
		o := out[name]
		o.Description = "Accepted so that one C(module_defaults) entry for the C(colonel_byte.zarf_planner.zarf_planner) action group sets it for every module; unused by this module."
		out[name] = o
	}
	maps.Copy(out, opts)
	return out
}

// kinds maps a declared option's kind to its Ansible type and elements.
var kinds = map[options.Kind][2]string{
	options.String:    {ansible.TypeStr, ""},
	options.Path:      {ansible.TypePath, ""},
	options.Bool:      {ansible.TypeBool, ""},
	options.Int:       {ansible.TypeInt, ""},
	options.Duration:  {ansible.TypeInt, ""},
	options.List:      {ansible.TypeList, ansible.TypeStr},
	options.PathList:  {ansible.TypeList, ansible.TypePath},
	options.StringMap: {ansible.TypeDict, ansible.TypeStr},
	options.IntMap:    {ansible.TypeDict, ansible.TypeInt},
	options.FileMode:  {ansible.TypeRaw, ""},
}

// declared converts the options declared by v's type to Ansible options.
func declared(v any) map[string]ansible.Option {
	out := map[string]ansible.Option{}
	for _, o := range options.Of(v) {
		k := kinds[o.Kind]
		opt := ansible.Option{Type: k[0], Elements: k[1], Choices: o.Choices, Aliases: o.Aliases, Description: o.Help}
		switch d := o.DefaultValue().(type) {
		case int:
			opt.Default = int64(d)
		case nil:
		default:
			opt.Default = d
		}
		out[o.Name] = opt
	}
	return out
}

// Module names.
const (
	Plan    = "zarf_bundle_plan"
	Barrier = "zarf_readiness_barrier"
	Cache   = "zarf_bundle_cache"
	// Catalog is the catalog's module, named as the CLI's catalog command.
	Catalog = "zarf_bundle_catalog"
)

// specOf builds each module's argument spec, by module name.
var specOf = map[string]func() ansible.Spec{
	Plan:    planSpec,
	Barrier: barrierSpec,
	Cache:   cacheSpec,
	Catalog: catalogSpec,
}

// Lookup returns the argument spec of the module name, built afresh
// (the caller may change it), and whether there is such a module.
func Lookup(name string) (ansible.Spec, bool) {
	f, ok := specOf[name]
	if !ok {
		return ansible.Spec{}, false
	}
	return f(), true
}

// All returns every module's argument spec, by module name, built afresh.
func All() map[string]ansible.Spec {
	out := make(map[string]ansible.Spec, len(specOf))
	for name, f := range specOf {
		out[name] = f()
	}
	return out
}

// Former returns a module's former names, each mapped to its name. Each
// still runs, for one release: the collection's meta/runtime.yml
// redirects it (with Ansible's deprecation warning) and the module binary
// answers to it.
func Former() map[string]string {
	return map[string]string{"zarf_bundle_info": Catalog}
}

// Name is the module a name given to the binary means: the name itself,
// or the module a former name redirects to.
func Name(name string) string {
	if to, ok := Former()[name]; ok {
		return to
	}
	return name
}

// planSpec is zarf_bundle_plan's spec: path, every declared plan option,
// and the daemon's options.
func planSpec() ansible.Spec {
	opts := with(nil, declared(options.Request{}))
	opts["path"] = ansible.Option{Type: ansible.TypePath, Required: true, Description: pathHelp}
	return ansible.Spec{Options: opts}
}

// pathHelp describes the path of the modules that read packages.
const pathHelp = "Directory holding the Zarf package archives (only files directly inside it are read), or a registry source - C(oci://HOST/NAMESPACE) (every package published under it) or one C(oci://HOST/NAMESPACE/NAME:TAG) or C(@sha256:DIGEST)."

// registryOptions are the plan's options that reach the registry of a
// registry source, and the render budget of the read (which travels with
// them, contract.RegistryAccess).
func registryOptions() map[string]ansible.Option {
	read := declared(options.Read{})
	out := map[string]ansible.Option{}
	for _, name := range []string{"plain_http", "insecure_skip_tls_verify", "registry_ca_file", "registry_timeout", "render_budget", "read_budget"} {
		out[name] = read[name]
	}
	return out
}

// RegistryAccess is the registry access a cache or catalog module's
// validated parameters give.
func RegistryAccess(params map[string]any) contract.RegistryAccess {
	a := contract.RegistryAccess{Caller: options.ModuleCaller}
	a.PlainHTTP, _ = params["plain_http"].(bool)
	a.InsecureSkipTLSVerify, _ = params["insecure_skip_tls_verify"].(bool)
	a.CAFile, _ = params["registry_ca_file"].(string)
	if n, ok := params["registry_timeout"].(int64); ok {
		a.TimeoutSeconds = int(min(max(n, 0), 1<<31-1))
	}
	if n, ok := params["render_budget"].(int64); ok {
		a.RenderBudgetSeconds = int(min(max(n, 0), 1<<31-1))
	}
	if n, ok := params["read_budget"].(int64); ok {
		a.ReadBudgetGiB = int(min(max(n, 0), 1<<31-1))
	}
	return a
}

func barrierSpec() ansible.Spec {
	opts := with([]string{"cache_dir"}, nil)
	opts["barrier"] = ansible.Option{Type: ansible.TypeDict, Description: "A plan item's C(barrier) (C(crds), C(storage_classes), C(namespaces), C(package))."}
	opts["checks"] = ansible.Option{Type: ansible.TypeList, Elements: ansible.TypeDict, Description: "Checks listed by hand instead of a plan item's barrier, each with C(kind) (C(crd), C(storage_class), C(namespace), C(package), or a workload - C(deployment), C(statefulset), C(daemonset), which also need C(namespace)) and C(name).\n" +
		"C(operator_condition) (with C(namespace)) names an OLM OperatorCondition - its Upgradeable is believed only once its status observedGeneration equals the generation (no Upgradeable condition at all lets the upgrade proceed).\n" +
		"A workload must be Current by kstatus rules; a status whose observedGeneration lags the generation is never believed."}
	opts["timeout"] = ansible.Option{Type: ansible.TypeInt, Default: int64(600), Description: "Seconds to wait for the barrier before failing, listing each unmet check with its last observed state."}
	return ansible.Spec{Options: opts, MutuallyExclusive: [][]string{{"barrier", "checks"}}, RequiredOneOf: [][]string{{"barrier", "checks"}}}
}

func cacheSpec() ansible.Spec {
	opts := with([]string{"kubeconfig", "context"}, nil)
	opts["path"] = ansible.Option{Type: ansible.TypePath, Required: true, Description: "Directory whose archives to cache (or forget), or a registry source - C(oci://HOST/NAMESPACE) or one C(oci://HOST/NAMESPACE/NAME:TAG) - whose packages' metadata to cache by manifest digest, so that a plan of it later fetches no manifest and no blob."}
	opts["state"] = ansible.Option{Type: ansible.TypeStr, Default: "present", Choices: []string{"present", "absent"}, Description: "C(present) reads every archive not yet cached; C(absent) forgets the directory's archives (of a registry source, every cached package of its namespace, or of the repository a tag names)."}
	opts["prune"] = ansible.Option{Type: ansible.TypeBool, Default: false, Description: "With C(state=present), also forget cached archives that are no longer in the directory (or no longer listed under a registry namespace; refused for a tag or digest)."}
	maps.Copy(opts, registryOptions())
	return ansible.Spec{Options: opts}
}

// catalogSpec is zarf_bundle_catalog's spec: path, use_cache (declared with the
// plan options), markdown, and the daemon's options.
func catalogSpec() ansible.Spec {
	opts := with([]string{"kubeconfig", "context"}, nil)
	opts["path"] = ansible.Option{Type: ansible.TypePath, Required: true, Description: pathHelp}
	maps.Copy(opts, registryOptions())
	sources := declared(options.Read{})["sources"]
	sources.Description = "More sources after path - directories and registry sources or references, mixed - catalogued with it as one directory, as a plan of them reads them (a package in two sources with the same zarf.yaml is listed once, from the first)."
	opts["sources"] = sources
	opts["use_cache"] = declared(options.Cache{})["use_cache"]
	// The plan's public_key, which here decides nothing: it says who signed.
	key := declared(options.Read{})["public_key"]
	key.Description = "A cosign public key (PEM, as zarf tools gen-key writes cosign.pub): each package's signature is checked with it, and the catalog says who signed what (C(signed_by), the key's fingerprint; C(signature_error) when it does not verify). Without it, signatures are listed, not checked."
	opts["public_key"] = key
	opts["markdown"] = ansible.Option{Type: ansible.TypeBool, Default: false, Description: "Also return the catalog as Markdown in C(markdown), for a change review (what C(zarf-planner catalog -o markdown) prints)."}
	// The plan's prerequisites: the catalog shows the operator's documents.
	operator := declared(options.Read{})["prerequisites"]
	operator.Description = "The operator's PackagePrerequisites documents (a YAML file of one or more, or a directory of such files), as zarf_bundle_plan reads them: each package they apply to is shown with the operator's document in place of its own (C(document))."
	opts["prerequisites"] = operator
	return ansible.Spec{Options: opts}
}

// PlanOptions are zarf_bundle_plan's validated parameters as the plan
// options they name (package planner/options); options not among them
// keep their declared defaults. The request is built from them by
// caller.NewPlan, given Given for the replay of a saved plan.
func PlanOptions(params map[string]any) (options.Request, error) {
	given := map[string]any{}
	for _, o := range options.Of(options.Request{}) {
		v, ok := params[o.Name]
		if !ok || v == nil {
			continue
		}
		if n, isNumber := v.(json.Number); isNumber && o.Kind == options.FileMode {
			// YAML's octal 0640, unquoted, arrives as 416.
			i, err := n.Int64()
			if err != nil {
				return options.Request{}, fmt.Errorf("%s: %s is not a mode: give one such as '0640'", o.Name, n)
			}
			if v, err = options.FileModeOfNumber(i); err != nil {
				return options.Request{}, fmt.Errorf("%s: %w", o.Name, err)
			}
		}
		given[o.Name] = v
	}
	b, err := json.Marshal(given)
	if err != nil {
		return options.Request{}, fmt.Errorf("encoding the options: %w", err)
	}
	return contract.DecodeOptions(b)
}

// Given says whether the arguments Ansible passed (before defaults) give
// the declared option name, under its name or a former one.
func Given(raw map[string]any, name string) bool {
	o, ok := options.Find(options.Request{}, name)
	if !ok {
		return false
	}
	for _, n := range append([]string{o.Name}, o.Aliases...) {
		if v, ok := raw[n]; ok && v != nil {
			return true
		}
	}
	return false
}
