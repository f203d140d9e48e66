package cli

import (
	"encoding/json"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/barrier"
	"github.com/colonel-byte/zarf-planner/caller"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/contract/plannerpb"
	"github.com/colonel-byte/zarf-planner/module/ansible"
	"github.com/colonel-byte/zarf-planner/module/specs"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/strictjson"
)

// The vocabulary docs/vocabulary.md writes down, checked against every
// command's flags and every module's spec.
var (
	// formatWords are every format any -o may name, one word each.
	formatWords = []string{"text", "json", "yaml", "markdown", "html", "mermaid", "dot"}
	// writesFile recognises the help of an option that names a file the
	// command writes.
	writesFile = regexp.MustCompile(`(?i)\bwrites? \b.*\bto this file\b|\bthe file to write\b|\bare written\b`)
	// checkKinds are the kinds a check is listed by hand with, in both
	// front ends.
	checkKinds = []string{"crd", "storage_class", "namespace", "package", "deployment", "statefulset", "daemonset", "operator_condition"}
	// concepts maps a CLI command to the module that does the same, named
	// zarf_bundle_COMMAND.
	concepts = map[string]string{"plan": specs.Plan, "catalog": specs.Catalog}
)

// commands is every command of the CLI, the root included.
func commands() []*cobra.Command {
	var out []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
	return out
}

// eachFlag calls f with every flag a command defines itself.
func eachFlag(t *testing.T, f func(t *testing.T, cmd *cobra.Command, fl *pflag.Flag)) {
	t.Helper()
	for _, cmd := range commands() {
		cmd.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			t.Run(cmd.CommandPath()+" --"+fl.Name, func(t *testing.T) { f(t, cmd, fl) })
		})
	}
}

func TestVocabularyOutputIsAFormat(t *testing.T) {
	seen := 0
	eachFlag(t, func(t *testing.T, cmd *cobra.Command, fl *pflag.Flag) {
		if fl.Name != "output" && fl.Shorthand != "o" || fl.Hidden {
			return
		}
		seen++
		formats := fl.Annotations[formatsOf]
		if len(formats) == 0 {
			t.Fatalf("-o/--output of %s declares no formats: it is a format everywhere (formatFlag); a file to write is --%s", cmd.CommandPath(), fileFlagName)
		}
		if fl.Name != "output" || fl.Shorthand != "o" {
			t.Errorf("the format flag is -%s/--%s; want -o/--output", fl.Shorthand, fl.Name)
		}
		if _, ok := fl.Value.(*formatValue); !ok {
			t.Errorf("-o is a %T, not a format", fl.Value)
		}
		if !slices.Contains(formats, fl.DefValue) {
			t.Errorf("default %q is not one of its formats %v", fl.DefValue, formats)
		}
		for _, f := range formats {
			if !slices.Contains(formatWords, f) {
				t.Errorf("format %q is not a word of the vocabulary %v (the text rendering is text, never table)", f, formatWords)
			}
			if !strings.Contains(fl.Usage, f) {
				t.Errorf("help %q does not say the format %q", fl.Usage, f)
			}
		}
	})
	if seen < 7 {
		t.Errorf("found -o on %d commands; the walk missed some", seen)
	}
}

func TestVocabularyFormerFormatsAreNoted(t *testing.T) {
	for _, args := range [][]string{{"catalog", "-o", "table"}, {"inspect", "-o", "table"}} {
		root := newRoot(io.Discard, io.Discard)
		cmd, rest, err := root.Find(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatal(err)
		}
		if got := cmd.Flags().Lookup("output").Value.String(); got != "text" {
			t.Errorf("%v gives format %q; want text", args, got)
		}
		var note strings.Builder
		noteAliases(cmd, &note)
		if !strings.Contains(note.String(), "-o table is a former spelling") || !strings.Contains(note.String(), "use -o text") {
			t.Errorf("%v: stderr %q; want the former spelling noted", args, note.String())
		}
	}
}

func TestVocabularyFileToWriteIsTo(t *testing.T) {
	seen := 0
	eachFlag(t, func(t *testing.T, cmd *cobra.Command, fl *pflag.Flag) {
		if fl.Hidden || fl.Value.Type() == "bool" || !writesFile.MatchString(fl.Usage) {
			return
		}
		seen++
		if fl.Name != fileFlagName && !strings.HasSuffix(fl.Name, "-"+fileFlagName) {
			t.Errorf("--%s names a file %s writes (%q); call it --%s (or WHAT-%s beside others)", fl.Name, cmd.CommandPath(), fl.Usage, fileFlagName, fileFlagName)
		}
	})
	for name, spec := range specs.All() {
		for opt, o := range spec.Options {
			if !writesFile.MatchString(o.Description) {
				continue
			}
			seen++
			if !strings.HasSuffix(opt, "_"+fileFlagName) {
				t.Errorf("%s's option %s names a file it writes; call it WHAT_%s", name, opt, fileFlagName)
			}
		}
	}
	// kubeconfig, deploy-report, plan/verify-plan/graph/why's save_to and
	// html_to, and the plan module's two.
	if seen < 6 {
		t.Errorf("found %d options that name a file to write; the rule recognises too few", seen)
	}
}

// TestVocabularyFormerSpellingsPointSomewhere: every hidden former
// spelling names a flag its command has.
func TestVocabularyFormerSpellingsPointSomewhere(t *testing.T) {
	eachFlag(t, func(t *testing.T, cmd *cobra.Command, fl *pflag.Flag) {
		to, ok := fl.Annotations[aliasOf]
		if !ok {
			return
		}
		if !fl.Hidden {
			t.Error("a former spelling is not hidden")
		}
		name := strings.TrimPrefix(strings.Fields(to[0])[0], "-o/")
		name, _, _ = strings.Cut(strings.TrimPrefix(name, "--"), "=")
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("former spelling of %q, which %s does not have", to[0], cmd.CommandPath())
		}
	})
}

func TestVocabularyTimeoutIsADuration(t *testing.T) {
	eachFlag(t, func(t *testing.T, _ *cobra.Command, fl *pflag.Flag) {
		if fl.Name == "timeout" || strings.HasSuffix(fl.Name, "-timeout") {
			if fl.Value.Type() != "duration" {
				t.Errorf("--%s is a %s; a CLI timeout is a Go duration", fl.Name, fl.Value.Type())
			}
		}
	})
	for name, spec := range specs.All() {
		o, ok := spec.Options["timeout"]
		if !ok {
			t.Errorf("%s has no timeout", name)
			continue
		}
		if o.Type != ansible.TypeInt || !strings.HasPrefix(o.Description, "Seconds ") {
			t.Errorf("%s's timeout is a %s (%q); a module's timeout is whole seconds", name, o.Type, o.Description)
		}
	}
	// The one rule between them.
	for _, tt := range []struct {
		d    time.Duration
		want int64
	}{{time.Second, 1}, {1500 * time.Millisecond, 2}, {time.Millisecond, 1}, {10 * time.Minute, 600}} {
		if got, err := options.WholeSeconds(tt.d); err != nil || got != tt.want {
			t.Errorf("WholeSeconds(%s) = %d, %v; want %d", tt.d, got, err, tt.want)
		}
		if back, err := options.Seconds(tt.want); err != nil || back < tt.d || back-tt.d >= time.Second {
			t.Errorf("Seconds(%d) = %s, %v; want the duration %s rounded up", tt.want, back, err, tt.d)
		}
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := options.WholeSeconds(d); err == nil {
			t.Errorf("WholeSeconds(%s) took a timeout that is not positive", d)
		}
	}
	if _, err := options.Seconds(0); err == nil {
		t.Error("Seconds(0) took a timeout that is not positive")
	}
}

// TestVocabularyOneNamePerConcept: a module does what the CLI command of
// its name does, and its name is the same in the spec, the Makefile, its
// documentation and the collection's action group; a former name only
// redirects, with a deprecation.
func TestVocabularyOneNamePerConcept(t *testing.T) {
	root := newRoot(io.Discard, io.Discard)
	for command, module := range concepts {
		if c, _, err := root.Find([]string{command}); err != nil || c.Name() != command {
			t.Errorf("the CLI has no %s command", command)
		}
		if module != "zarf_bundle_"+command {
			t.Errorf("the module of %s is %s; want zarf_bundle_%s", command, module, command)
		}
		if _, ok := specs.All()[module]; !ok {
			t.Errorf("no spec for %s", module)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range specs.All() {
			if !yield(n) {
				return
			}
		}
	})
	makefile, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^MODULES := (.*)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile has no MODULES")
	}
	if got := slices.Sorted(slices.Values(strings.Fields(string(m[1])))); !slices.Equal(got, names) {
		t.Errorf("Makefile MODULES %v; want the specs' %v", got, names)
	}
	for _, n := range names {
		doc, err := os.ReadFile("../module/docs/" + n + ".yml")
		if err != nil || !strings.Contains(string(doc), "\n  module: "+n+"\n") {
			t.Errorf("module/docs/%s.yml does not document module %s (%v)", n, n, err)
		}
	}
	var runtime struct {
		ActionGroups  map[string][]string `json:"action_groups"`
		PluginRouting map[string]map[string]struct {
			Redirect    string `json:"redirect"`
			Deprecation *struct {
				RemovalVersion string `json:"removal_version"`
				WarningText    string `json:"warning_text"`
			} `json:"deprecation"`
		} `json:"plugin_routing"`
	}
	b, err := os.ReadFile("../module/collection/meta/runtime.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &runtime); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(runtime.ActionGroups["zarf_planner"])); !slices.Equal(got, names) {
		t.Errorf("action group %v; want the modules %v", got, names)
	}
	for former, to := range specs.Former() {
		if _, ok := specs.All()[former]; ok {
			t.Errorf("former name %s is still a module of its own", former)
		}
		if specs.Name(former) != to || specs.Name(to) != to {
			t.Errorf("specs.Name(%s) = %s; want %s", former, specs.Name(former), to)
		}
		r := runtime.PluginRouting["modules"][former]
		if r.Redirect != "colonel_byte.zarf_planner."+to || r.Deprecation == nil || r.Deprecation.RemovalVersion == "" || !strings.Contains(r.Deprecation.WarningText, to) {
			t.Errorf("meta/runtime.yml routes module %s as %+v; want a redirect to %s with a deprecation naming it", former, r, to)
		}
		if a := runtime.PluginRouting["action"][former]; a.Redirect != "colonel_byte.zarf_planner."+to {
			t.Errorf("meta/runtime.yml does not redirect the action plugin %s to %s", former, to)
		}
	}
}

// TestVocabularyChecksHaveOneShape parses the same checks through the
// CLI's --check and the module's checks, then decodes each as the daemon
// does: the barriers must be equal.
func TestVocabularyChecksHaveOneShape(t *testing.T) {
	refs := []barrier.Ref{
		{Kind: "crd", Name: "certificates.cert-manager.io"},
		{Kind: "storage_class", Name: "ceph-block"},
		{Kind: "namespace", Name: "cert-manager"},
		{Kind: "package", Name: "operator-cert-manager"},
		{Kind: "deployment", Name: "cert-manager", Namespace: "cert-manager"},
		{Kind: "statefulset", Name: "db", Namespace: "data"},
		{Kind: "daemonset", Name: "csi-node", Namespace: "rook-ceph"},
		{Kind: "operator_condition", Name: "etcd.v1", Namespace: "olm"},
	}
	// The CLI.
	wait, _, err := newRoot(io.Discard, io.Discard).Find([]string{"barrier"})
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	var items []any
	for _, r := range refs {
		s := "kind=" + r.Kind + ",name=" + r.Name
		item := map[string]any{"kind": r.Kind, "name": r.Name}
		if r.Namespace != "" {
			s += ",namespace=" + r.Namespace
			item["namespace"] = r.Namespace
		}
		args = append(args, "--check", s)
		items = append(items, item)
	}
	if err := wait.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	// The CLI: what its barrier sends (caller.Barrier, as cli/barrier.go
	// fills it).
	req, err := caller.Barrier{Checks: *wait.Flags().Lookup("check").Value.(*checksValue).refs, Timeout: time.Second}.Request()
	if err != nil {
		t.Fatal(err)
	}
	fromCLI := req.Checks
	// The module: validated by its spec, sent as module/main.go's wait
	// sends them.
	inv, err := specs.All()[specs.Barrier].Validate(map[string]any{"checks": items})
	if err != nil {
		t.Fatal(err)
	}
	fromModule, err := json.Marshal(inv.Params["checks"])
	if err != nil {
		t.Fatal(err)
	}
	// The daemon (daemon/server's Barrier).
	decode := func(who string, b []byte) barrier.Barrier {
		var got []barrier.Ref
		if err := strictjson.Unmarshal("checks", b, &got); err != nil {
			t.Fatalf("the daemon refuses the %s's checks %s: %v", who, b, err)
		}
		var bar barrier.Barrier
		if err := bar.Add(got); err != nil {
			t.Fatalf("the %s's checks: %v", who, err)
		}
		return bar
	}
	cli, module := decode("CLI", fromCLI), decode("module", fromModule)
	if !reflect.DeepEqual(cli, module) {
		t.Errorf("one list of checks makes two barriers:\nCLI    %+v\nmodule %+v", cli, module)
	}
	if len(cli.Workloads) != 3 || len(cli.OperatorConditions) != 1 || cli.Package == "" {
		t.Errorf("the barrier %+v lost checks", cli)
	}
	// Both say the same kinds.
	help := wait.Flags().Lookup("check").Usage
	desc := specs.All()[specs.Barrier].Options["checks"].Description
	for _, k := range checkKinds {
		if !strings.Contains(help, k) {
			t.Errorf("--check's help does not name the kind %s", k)
		}
		if !strings.Contains(desc, "C("+k+")") {
			t.Errorf("the module's checks description does not name the kind %s", k)
		}
	}
	for _, bad := range []string{"crd", "kind=crd", "name=x", "kind=crd,name=x,colour=red", "kind=crd,kind=namespace,name=x", "kind=crd,name="} {
		if _, err := parseCheck(bad); err == nil {
			t.Errorf("--check %q was taken", bad)
		}
	}
}

// TestVocabularyFormerSpellingsStillWork: each former spelling does what
// its replacement does, saying so on stderr; a malformed --check or a
// timeout that is not positive is a usage error before anything is asked.
func TestVocabularyFormerSpellingsStillWork(t *testing.T) {
	for _, tt := range []struct {
		name     string
		args     []string
		wantCode int
		stdout   string
		note     string
	}{
		{"graph --format", []string{"graph", "../examples/bundles/reference-stack", "--format", "dot"}, ExitOK, "digraph plan {", "--format is a former spelling and will be removed in the next release; use -o/--output"},
		{"catalog -o table", []string{"catalog", "../examples/bundles/reference-stack", "-o", "table"}, ExitOK, "operator-cert-manager", "-o table is a former spelling and will be removed in the next release; use -o text"},
		{"barrier --crd", []string{"barrier", "--crd", "x.example.com", "--timeout", "0s"}, ExitUsage, "", "--crd is a former spelling and will be removed in the next release; use --check kind=crd,name=NAME"},
		{"barrier --workload", []string{"barrier", "--workload", "deployment/ns/web", "--timeout", "0s"}, ExitUsage, "", "use --check kind=deployment|statefulset|daemonset,name=NAME"},
		{"wait", []string{"wait", "--check", "kind=crd,name=x", "--timeout", "-1s"}, ExitUsage, "", "zarf-planner: wait is a former name and will be removed in the next release; use zarf-planner barrier"},
		{"cache warm --check", []string{"cache", "warm", "../examples/bundles/reference-stack", "--check", "--cache-dir", t.TempDir(), "--state-dir", t.TempDir()}, ExitOK, "would add 6, removed 0", "--check is a former spelling and will be removed in the next release; use --dry-run"},
		{"a --check without a name", []string{"barrier", "--check", "kind=crd"}, ExitUsage, "", `--check "kind=crd" is not kind=KIND,name=NAME[,namespace=NAMESPACE]`},
		{"a --check with another key", []string{"barrier", "--check", "kind=crd,name=x,ns=y"}, ExitUsage, "", `has key "ns"; use kind, name and namespace`},
		{"a timeout that is not positive", []string{"barrier", "--check", "kind=crd,name=x", "--timeout", "-1s"}, ExitUsage, "", "--timeout: timeout must be a positive duration, got -1s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, tt.args...)
			if code != tt.wantCode || !strings.Contains(out, tt.stdout) || !strings.Contains(stderr, tt.note) {
				t.Errorf("exit %d, stdout %.200q, stderr %q; want exit %d, %q on stdout, %q on stderr", code, out, stderr, tt.wantCode, tt.stdout, tt.note)
			}
		})
	}
}

// TestVocabularyOnTheWire: each call of the wire is one concept, named
// by one word, the word of the CLI command and of the module that make
// it: the gRPC service's methods are contract.Planner's, and each is a
// command of the CLI (its first word the call's, lower-case) and, where
// a module makes it, a module whose name ends in that word.
func TestVocabularyOnTheWire(t *testing.T) {
	calls := map[string]struct{ command, module string }{
		"Plan":    {"plan", specs.Plan},
		"Inspect": {"inspect", ""},
		"Catalog": {"catalog", specs.Catalog},
		"Cache":   {"cache warm", specs.Cache},
		"Barrier": {"barrier", specs.Barrier},
		"Status":  {"daemon status", ""},
	}
	var wire []string
	for _, m := range plannerpb.Planner_ServiceDesc.Methods {
		wire = append(wire, m.MethodName)
	}
	var planner []string
	it := reflect.TypeFor[contract.Planner]()
	for i := range it.NumMethod() {
		planner = append(planner, it.Method(i).Name)
	}
	slices.Sort(wire)
	if want := slices.Sorted(maps.Keys(calls)); !slices.Equal(wire, want) || !slices.Equal(planner, want) {
		t.Fatalf("the wire's calls %v, contract.Planner's %v; want %v, one word each (docs/vocabulary.md)", wire, planner, want)
	}
	root := newRoot(io.Discard, io.Discard)
	for call, c := range calls {
		word := strings.ToLower(call)
		cmd, rest, err := root.Find(strings.Fields(c.command))
		if err != nil || len(rest) > 0 || cmd.Hidden || cmd.CommandPath() != "zarf-planner "+c.command {
			t.Errorf("the call %s has no command %q of the CLI (%v)", call, c.command, err)
		}
		if first := strings.Fields(c.command)[0]; first != word && call != "Status" {
			t.Errorf("the call %s is the command %q: want it named %s", call, c.command, word)
		}
		if c.module == "" {
			continue
		}
		if _, ok := specs.All()[c.module]; !ok || !strings.HasSuffix(c.module, "_"+word) {
			t.Errorf("the call %s is made by the module %s: want a module whose name ends in _%s", call, c.module, word)
		}
	}
}
