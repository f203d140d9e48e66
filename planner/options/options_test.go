package options

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// Every declared option has a type a front end can give, a name used once,
// help, and a default of its own type.
func TestDeclarations(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range Of(Request{}) {
		if o.Kind == "" {
			t.Errorf("option %s has a type no front end can give", o.Name)
		}
		if seen[o.Name] {
			t.Errorf("option %s is declared twice", o.Name)
		}
		seen[o.Name] = true
		for _, a := range o.Aliases {
			if seen[a] {
				t.Errorf("alias %s of %s is also a name", a, o.Name)
			}
			seen[a] = true
		}
		if o.Help == "" {
			t.Errorf("option %s has no help", o.Name)
		}
		switch o.Kind {
		case Bool:
			if _, err := strconv.ParseBool(o.Default); o.Default != "" && err != nil {
				t.Errorf("option %s has default %q, not a bool", o.Name, o.Default)
			}
		case Int, Duration:
			if _, err := strconv.Atoi(o.Default); o.Default != "" && err != nil {
				t.Errorf("option %s has default %q, not an int", o.Name, o.Default)
			}
		}
		if o.Content && (o.Kind != Path || o.MaxContent <= 0) {
			t.Errorf("option %s is declared content but is not a path with a size bound (kind %s, bound %d)", o.Name, o.Kind, o.MaxContent)
		}
		if o.Carry && (o.Kind != Path && o.Kind != PathList || o.MaxContent <= 0 || o.Dir) {
			t.Errorf("option %s is declared carry but is not a path or path list with a size bound (kind %s, bound %d, dir %v)", o.Name, o.Kind, o.MaxContent, o.Dir)
		}
		if err := whoOpens(o); err != nil {
			t.Error(err)
		}
		if len(o.Choices) > 0 && o.Default != "" && !contains(o.Choices, o.Default) {
			t.Errorf("option %s defaults to %q, not one of its choices %v", o.Name, o.Default, o.Choices)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// The files whose content decides a plan come from the declarations: a
// struct that declares one more content option lists it too.
func TestFilesFollowTheDeclarations(t *testing.T) {
	r := Request{Read: Read{PublicKey: "/k.pub", Policy: "/p.yaml", Prerequisites: "/ops"}, Snapshot: "/s.json", Saved: Saved{PlanFile: "/plan.json"}}
	want := []File{{"public_key", "/k.pub", 64 << 10, false, true}, {"policy", "/p.yaml", 1 << 20, false, true}, {"prerequisites", "/ops", 4 << 20, true, true}, {"snapshot", "/s.json", 64 << 20, false, true}}
	if got := Files(&r); !slices.Equal(got, want) {
		t.Errorf("Files = %v; want %v", got, want)
	}
	if got := Files(Request{}); len(got) != 4 || got[0].Path != "" {
		t.Errorf("Files of an empty request = %v; want the four content options, not given", got)
	}
	type extended struct {
		Request
		Extra string `json:"extra" type:"path" content:"512" help:"x"`
	}
	got := Files(extended{Request: r, Extra: "/x"})
	if len(got) != 5 || got[4] != (File{"extra", "/x", 512, false, true}) {
		t.Errorf("Files of a struct declaring extra = %v; want it last", got)
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"64KiB": 64 << 10, "1MiB": 1 << 20, "2GiB": 2 << 30, "512": 512, "": 0, "x": 0, "-1": 0, "1MB": 0} {
		if got := parseSize(s); got != want {
			t.Errorf("parseSize(%q) = %d; want %d", s, got, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	d := Defaults()
	if !d.UseCache || d.VersionStrategy != StrategyNewestSatisfying || d.Mode != "" {
		t.Errorf("Defaults() = %+v; want use_cache true, newest_satisfying, no mode", d)
	}
}

func TestCheckNamesTheOptionInTheCallersWords(t *testing.T) {
	p := Plan{VersionStrategy: "oldest"}
	for caller, want := range map[Caller]string{
		ModuleCaller: `option version_strategy is "oldest"; use newest_satisfying or newest_only`,
		CLICaller:    `--version-strategy is "oldest"; use newest_satisfying or newest_only`,
	} {
		if err := Check(&p, caller); err == nil || err.Error() != want {
			t.Errorf("Check as %s = %v; want %s", caller, err, want)
		}
	}
	if err := Check(&Plan{Mode: ModeCluster}, CLICaller); err != nil {
		t.Errorf("a valid choice: %v", err)
	}
}

func TestCallerVocabulary(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{ModuleCaller.Option("exclude"), "option exclude"},
		{CLICaller.Option("exclude"), "--exclude"},
		{ModuleCaller.Name("allow_downgrade"), "allow_downgrade"},
		{CLICaller.Name("allow_downgrade"), "--allow-downgrade"},
		{ModuleCaller.Setting("allow_downgrade", "true"), "allow_downgrade: true"},
		{CLICaller.Setting("allow_downgrade", "true"), "--allow-downgrade"},
		{CLICaller.Setting("architecture", "arm64"), "--architecture arm64"},
		{ModuleCaller.Entry("select", "storage", "csi-a"), `select: {"storage": csi-a}`},
		{CLICaller.Entry("select", "init,init-slim", "init"), "--select init,init-slim=init"},
		{ModuleCaller.Entry("priorities", "csi-a", "100"), "priorities: {csi-a: 100}"},
		{CLICaller.Entry("constraints", "cm", ">=1.0, <2.0"), `--constraints 'cm=>=1.0, <2.0'`},
		{CLICaller.Entry("constraints", "it's", "1"), `--constraints 'it'\''s=1'`},
		{ModuleCaller.List("prereleases", "a", "b"), "prereleases: [a, b]"},
		{CLICaller.List("prereleases", "a", "b"), "--prereleases a,b"},
		{ModuleCaller.The("flavor"), "the flavor option"},
		{CLICaller.The("flavor"), "--flavor"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q; want %q", tt.got, tt.want)
		}
	}
}

// whoOpens checks that a path option says who opens its file, once: the
// caller, carrying its bytes (content or carry), or, by name, the daemon
// or the caller alone (opens). An option that says nothing is refused,
// so a new file option cannot be read by whoever happens to use it.
func whoOpens(o Option) error {
	path := o.Kind == Path || o.Kind == PathList
	said := 0
	for _, b := range []bool{o.Content, o.Carry, o.Opens != ""} {
		if b {
			said++
		}
	}
	switch {
	case !path && said > 0:
		return fmt.Errorf("option %s is not a path but says who opens it", o.Name)
	case path && said != 1:
		return fmt.Errorf("option %s names a file: declare exactly one of content, carry or opens (it declares %d): the caller reads content and carry files and sends their bytes; opens says who else opens it", o.Name, said)
	case o.Opens != "" && o.Opens != OpensDaemon && o.Opens != OpensCaller:
		return fmt.Errorf("option %s opens:%q; want %q or %q", o.Name, o.Opens, OpensDaemon, OpensCaller)
	}
	return nil
}

// TestEveryFileOptionSaysWhoOpensIt: a path option declared with none of
// content, carry or opens is refused (an option added without them, as
// in a request type of one more path option, fails).
func TestEveryFileOptionSaysWhoOpensIt(t *testing.T) {
	for _, o := range Of(Request{}) {
		if err := whoOpens(o); err != nil {
			t.Error(err)
		}
	}
	type extended struct {
		Request
		Extra string `json:"extra" type:"path" help:"A file."`
	}
	o, _ := Find(extended{}, "extra")
	if err := whoOpens(o); err == nil {
		t.Error("a path option that says nothing of who opens it is accepted")
	}
	var got []string
	for _, f := range CarriedFiles(Request{Read: Read{PublicKey: "/k"}, Approvals: Approvals{ApprovalKeys: []string{"/a", "/b"}}}) {
		got = append(got, f.Name)
	}
	want := []string{"public_key", "registry_ca_file", "policy", "prerequisites", "snapshot", "approval_keys", "approval_keys"}
	if !slices.Equal(got, want) {
		t.Errorf("CarriedFiles = %v; want %v", got, want)
	}
}

// TestNamesFitTheirKind: an option whose value names packages says where
// in a way its kind has (a list's items, a map's keys or values), so
// completion offers names where the flag takes them.
func TestNamesFitTheirKind(t *testing.T) {
	fits := map[string][]Kind{NamesItems: {List}, NamesKeys: {StringMap, IntMap}, NamesValues: {StringMap}}
	seen := 0
	for _, o := range Of(Request{}) {
		if o.Names == "" {
			continue
		}
		seen++
		if !slices.Contains(fits[o.Names], o.Kind) {
			t.Errorf("option %s (%s) says names:%q; want items on a list, keys or values on a map", o.Name, o.Kind, o.Names)
		}
	}
	if seen < 7 {
		t.Errorf("%d options say where they name packages; want select, priorities, packages, exclude, constraints, force and prereleases", seen)
	}
}
