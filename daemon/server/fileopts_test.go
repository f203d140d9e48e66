package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/cache/kept"
	"github.com/colonel-byte/zarf-planner/carry"
	"github.com/colonel-byte/zarf-planner/filesum"
	"github.com/colonel-byte/zarf-planner/inspect"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/savedplan"
	"github.com/colonel-byte/zarf-planner/service"
)

// TestADeclaredFileOptionReachesEveryKey adds a file option by its
// declaration alone (a request type with one more content option) and
// rewrites its file under the same name: the kept-plan key and the memo
// key change, and the saved plan is stale, naming the option. No list of
// file options is kept anywhere for it.
func TestADeclaredFileOptionReachesEveryKey(t *testing.T) {
	type extended struct {
		options.Request
		Extra string `json:"extra" type:"path" content:"1KiB" help:"A file whose content decides the plan."`
	}
	dir, err := filepath.Abs(copyBundle(t, signedBundle))
	if err != nil {
		t.Fatal(err)
	}
	extra := filepath.Join(t.TempDir(), "extra")
	if err := os.WriteFile(extra, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options.Defaults()
	o.Architecture = "amd64"
	read, early, err := service.Read(context.Background(), service.NewRequest(dir, o, options.ModuleCaller))
	if err != nil || early != nil {
		t.Fatalf("reading the directory: %v %+v", err, early)
	}
	files := options.Files(extended{Request: o, Extra: extra})
	type keys struct {
		kept  kept.Key
		memo  memoKey
		saved *savedplan.Doc
	}
	keysNow := func() keys {
		t.Helper()
		sums, err := filesum.Sums(files, carry.Files(files))
		if err != nil {
			t.Fatal(err)
		}
		k, _, err := kept.PlanKey(kept.Question{Build: buildinfo.ID, Path: dir, Plan: o.Plan, Read: o.Read, Caller: options.ModuleCaller, Count: inspect.IsCandidate, Sums: sums})
		if err != nil {
			t.Fatal(err)
		}
		p := *read
		p.Contents = sums
		m, err := memoKeyOf(&p)
		if err != nil {
			t.Fatal(err)
		}
		planned, err := renderRead(&p)
		if err != nil || planned.Failed {
			t.Fatalf("planning: %v (failed %v)", err, planned != nil && planned.Failed)
		}
		d, err := savedDoc(o, planned)
		if err != nil {
			t.Fatal(err)
		}
		return keys{k, m, d}
	}
	before := keysNow()
	if again := keysNow(); again.kept != before.kept || again.memo != before.memo || len(savedplan.Compare(before.saved, again.saved, options.CLICaller)) != 0 {
		t.Fatal("the same request with the same files keyed or recorded differently")
	}
	if err := os.WriteFile(extra, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	after := keysNow()
	if after.kept == before.kept {
		t.Error("the kept-plan key ignores a declared content option")
	}
	if after.memo == before.memo {
		t.Error("the memo key ignores a declared content option")
	}
	diffs := savedplan.Compare(before.saved, after.saved, options.CLICaller)
	if len(diffs) != 1 || !strings.HasPrefix(diffs[0], "--extra: the file's content was sha256 ") {
		t.Errorf("the saved plan's comparison of a rewritten declared content option: %q", diffs)
	}
}

// What the service read names every declared content option, so the
// memo key and the saved plan hold each (the public key and the policy
// given, the snapshot not).
func TestPreparedHoldsEveryDeclaredContent(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options.Defaults()
	o.Architecture, o.PublicKey, o.Policy = "amd64", publicKey, pol
	r := service.NewRequest(dir, o, options.ModuleCaller)
	r.Carried = carry.Files(r.Files())
	read, early, err := service.Read(context.Background(), r)
	if err != nil || early != nil {
		t.Fatalf("reading the directory: %v %+v", err, early)
	}
	var names, given []string
	for _, c := range read.Contents {
		names = append(names, c.Name)
		if c.SHA256 != "" {
			given = append(given, c.Name)
		}
	}
	var declared []string
	for _, f := range options.Files(o) {
		declared = append(declared, f.Name)
	}
	if !slices.Equal(names, declared) || !slices.Equal(given, []string{"public_key", "policy"}) {
		t.Errorf("Contents name %v (given %v); want every declared content option %v, the key and policy given", names, given, declared)
	}
}

// Rewriting the policy under the same name, even with what it allows
// unchanged, is a new question: the memo does not answer it.
func TestMemoFollowsThePolicysContent(t *testing.T) {
	d := memoDaemon(t)
	dir := copyBundle(t, signedBundle)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(comment string) {
		if err := os.WriteFile(pol, []byte("# "+comment+"\napiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed: {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	req := planReq(t, dir, func(o *options.Request) { o.Policy = pol })
	if _, memo := planBoth(t, d, req); memo {
		t.Fatal("the first plan came from the memo")
	}
	if _, memo := planBoth(t, d, req); !memo {
		t.Fatal("the same question was planned again")
	}
	write("two")
	if _, memo := planBoth(t, d, req); memo {
		t.Error("a policy rewritten under the same name was answered from the memo")
	}
}
