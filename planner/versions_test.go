package planner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
)

// requires is a document edit: one requirement of name within a range.
func requires(name, constraint string) func(*facts.Prerequisites) {
	return func(p *facts.Prerequisites) {
		p.Requires.Packages = append(p.Requires.Packages, facts.PackageRequirement{Name: name, Version: constraint})
	}
}

// A package with no version is planned while nothing constrains its
// version; a range on it fails naming it, and saying why.
func TestVersionlessPackages(t *testing.T) {
	plain := pkg("tools", "", nil)
	p, err := New([]facts.Candidate{plain, pkg("app", "1.0.0", needs("tools"))}, Options{})
	if err != nil {
		t.Fatalf("a versionless package nothing constrains: %v", err)
	}
	if got := strings.Join(names(p), ","); got != "tools,app" || p.Packages[0].Version != "" {
		t.Fatalf("plan %s (tools version %q); want tools (no version) then app", got, p.Packages[0].Version)
	}
	_, err = New([]facts.Candidate{plain, pkg("app", "1.0.0", requires("tools", ">=1.0.0"))}, Options{})
	f, ok := AsFailure(err)
	if !ok || len(f.Problems) != 1 || f.Problems[0].Kind != KindVersionConflict ||
		!strings.Contains(f.Problems[0].Message, "tools has no version: zarf.yaml metadata.version is empty, so no version range accepts it") {
		t.Fatalf("a range on a versionless package: %v; want a version conflict naming it", err)
	}
	_, err = New([]facts.Candidate{plain}, Options{Plan: options.Plan{Constraints: map[string]string{"tools": "<2.0.0"}}})
	if err == nil || !strings.Contains(err.Error(), "which its missing version does not satisfy (tools has no version") {
		t.Fatalf("an operator range on a versionless package: %v", err)
	}
}

// A versioned archive of a name wins over a versionless one of the same
// name, which sorts below every version.
func TestVersionlessSortsBelowEveryVersion(t *testing.T) {
	p, err := New([]facts.Candidate{pkg("tools", "", nil), pkg("tools", "0.0.1", nil)}, Options{})
	if err != nil || p.Packages[0].Version != "0.0.1" {
		t.Fatalf("plan %+v, %v; want tools 0.0.1", p, err)
	}
}

// UDS-style package revisions are semver prereleases, which a range that
// names no prerelease leaves out: the message says so and how to include
// them, and the prereleases option does.
func TestPrereleasesAreExplainedAndCanBeIncluded(t *testing.T) {
	cands := []facts.Candidate{pkg("cm", "1.14.0-uds.1", nil), pkg("app", "1.0.0", requires("cm", ">=1.13.0"))}
	for caller, want := range map[options.Caller]string{
		options.ModuleCaller: "cm 1.14.0-uds.1 is a prerelease, which semver leaves out of a range that names no prerelease: include it with a range such as >=1.14.0-0, or set prereleases: [cm]",
		options.CLICaller:    "or set --prereleases cm",
	} {
		_, err := New(cands, Options{Caller: caller})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want it to say %q", caller, err, want)
		}
	}
	p, err := New(cands, Options{Plan: options.Plan{Prereleases: []string{"cm"}}})
	if err != nil || strings.Join(itemVersions(p), ",") != "cm@1.14.0-uds.1,app@1.0.0" {
		t.Fatalf("with prereleases: [cm]: %v, %v", p, err)
	}

	// Beside a release, a newer prerelease left out says why.
	cands = append(cands, pkg("cm", "1.13.0", nil))
	p, err = New(cands, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := excludedReason(p, "cm", "1.14.0-uds.1"); !strings.Contains(r, "cm 1.13.0 is chosen instead") || !strings.Contains(r, "is a prerelease, which semver leaves out of version ranges that name no prerelease (set prereleases: [cm] to include it)") {
		t.Errorf("the prerelease left out says %q", r)
	}
}

// Two names at the same prerelease, under the same range, with only one of
// them listed in prereleases: each gets its own answer (accepts keeps its
// answers by range, version and whether prereleases count).
func TestPrereleasesAreOptedInPerName(t *testing.T) {
	cands := []facts.Candidate{
		pkg("cm", "1.14.0-uds.1", nil), pkg("ot", "1.14.0-uds.1", nil),
		pkg("app", "1.0.0", func(p *facts.Prerequisites) {
			requires("cm", ">=1.13.0")(p)
			requires("ot", ">=1.13.0")(p)
		}),
	}
	for _, listed := range []string{"cm", "ot"} {
		_, err := New(cands, Options{Plan: options.Plan{Prereleases: []string{listed}}})
		other := map[string]string{"cm": "ot", "ot": "cm"}[listed]
		if err == nil || !strings.Contains(err.Error(), other+" 1.14.0-uds.1 is a prerelease") || strings.Contains(err.Error(), listed+" 1.14.0-uds.1 is a prerelease") {
			t.Errorf("prereleases [%s]: %v; want only %s's prerelease refused", listed, err, other)
		}
	}
	p, err := New(cands, Options{Plan: options.Plan{Prereleases: []string{"cm", "ot"}}})
	if err != nil || len(p.Packages) != 3 {
		t.Fatalf("prereleases [cm, ot]: %v, %v; want all three planned", p, err)
	}
}

// A package that provides what it also requires satisfies itself.
func TestAPackageSatisfiesItsOwnProvides(t *testing.T) {
	self := pkg("operator", "1.0.0", func(p *facts.Prerequisites) {
		p.Provides.CRDs = []string{"widgets.example.com"}
		p.Provides.Capabilities = []string{"widgets"}
		p.Requires.CRDs = []string{"widgets.example.com"}
		p.Requires.Capabilities = []string{"widgets"}
	})
	p, err := New([]facts.Candidate{self}, Options{})
	if err != nil {
		t.Fatalf("a package requiring what it provides: %v", err)
	}
	if len(p.Packages) != 1 || len(p.Graph.Edges) != 0 {
		t.Fatalf("plan %v edges %v; want operator alone, with no edge to itself", names(p), p.Graph.Edges)
	}
}

// FuzzParseVersionIsNewVersion: parseVersion gives what semver.NewVersion
// gives, value for value, and refuses what it refuses.
func FuzzParseVersionIsNewVersion(f *testing.F) {
	for _, s := range []string{"1.2.3", "v1.2.3", "1.2", "1", "01.2.3", "1.02.3", "1.2.03", "1.2.3-rc.1", "1.2.3-rc.01", "1.2.3-01", "1.2.3+build.5",
		"1.2.3-rc.1+b", "1.2.3-", "1.2.3+", "1.2.3-a..b", "1.2.3+a..b", "1.2.3-ä", "18446744073709551616.0.0", "1.2.3.4", " 1.2.3", "1.2.3 ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gerr := parseVersion(s)
		want, werr := semver.NewVersion(s)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: parseVersion error %v, NewVersion error %v", s, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(*got, *want) {
			t.Fatalf("%q: parseVersion %#v, NewVersion %#v", s, *got, *want)
		}
	})
}
