package server

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/contract"
	"github.com/colonel-byte/zarf-planner/document"
	"github.com/colonel-byte/zarf-planner/planner"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/planner/options"
	"github.com/colonel-byte/zarf-planner/service"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

var (
	signedBundle = filepath.Join("..", "..", "testdata", "bundles", "signed")
	publicKey, _ = filepath.Abs(filepath.Join("..", "..", "testdata", "keys", "cosign.pub"))
	otherKey, _  = filepath.Abs(filepath.Join("..", "..", "testdata", "keys", "other.pub"))
)

// saveThenReplay saves the plan of req with one server and replays it
// with req2 on a fresh server (another daemon, later), returning the
// saved plan and the replay's answer.
func saveThenReplay(t *testing.T, req, req2 *contract.PlanRequest, between func()) (saved []byte, first, replay *contract.PlanAnswer) {
	t.Helper()
	req.Save = true
	first, err := memoDaemon(t).Plan(context.Background(), carried(req))
	if err != nil {
		t.Fatal(err)
	}
	if first.Failed || len(first.SavedPlan) == 0 {
		t.Fatalf("saving the plan: failed=%v, %d bytes saved: %s", first.Failed, len(first.SavedPlan), first.Result)
	}
	if between != nil {
		between()
	}
	req2.SavedPlan = first.SavedPlan
	replay, err = memoDaemon(t).Plan(context.Background(), carried(req2))
	if err != nil {
		t.Fatal(err)
	}
	return first.SavedPlan, first, replay
}

func problems(t *testing.T, doc []byte) []planner.Problem {
	t.Helper()
	res, err := document.DecodeResult("the result", doc)
	if err != nil {
		t.Fatal(err)
	}
	return res.Errors
}

// A saved plan of an unchanged directory replays as the exact bytes that
// were saved, and saving twice gives byte-identical files.
func TestSavedPlanReplaysExactlyAsSaved(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	withKey := func(o *options.Request) { o.PublicKey = publicKey }
	saved, first, replay := saveThenReplay(t, planReq(t, dir, withKey), planReq(t, dir, withKey), nil)
	if replay.Failed || !bytes.Equal(replay.Result, first.Result) {
		t.Fatalf("replay of an unchanged directory:\nsaved:  %.400s\nreplay: %.400s", first.Result, replay.Result)
	}
	again, err := memoDaemon(t).Plan(context.Background(), carried(func() *contract.PlanRequest { r := planReq(t, dir, withKey); r.Save = true; return r }()))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.SavedPlan, saved) {
		t.Fatal("two saves of one plan differ")
	}
	var d struct {
		Archives []struct {
			Path, SHA256 string
			Size         int64
		}
		KeyFingerprint string `json:"key_fingerprint"`
		PlanDigest     string `json:"plan_digest"`
	}
	if err := json.Unmarshal(saved, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Archives) != 3 || d.KeyFingerprint == "" || d.PlanDigest == "" {
		t.Fatalf("saved plan lacks its archives, key or digest: %s", saved)
	}
	for _, a := range d.Archives {
		fi, err := os.Stat(a.Path)
		if err != nil || fi.Size() != a.Size || len(a.SHA256) != 64 {
			t.Errorf("archive %+v: size on disk %v (%v)", a, fi, err)
		}
	}
}

// Each way a saved plan goes stale is named, and all at once when several
// happen.
func TestStaleSavedPlanNamesEveryDifference(t *testing.T) {
	twinA, twinB := craft.Twins("twin", "1.0.0")
	cases := []struct {
		name    string
		between func(t *testing.T, dir string)
		set     func(*options.Request)
		want    []string
	}{
		{"archive replaced in place with its size and mtime kept", func(t *testing.T, dir string) {
			if err := craft.RewriteInPlace(filepath.Join(dir, "twin.tar"), twinB); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"twin.tar was replaced"}},
		{"archive added", func(t *testing.T, dir string) {
			copyFile(t, filepath.Join("..", "..", "testdata", "bundles", "cycle", "zarf-package-alpha-amd64-1.0.0.tar.zst"), filepath.Join(dir, "zarf-package-alpha-amd64-1.0.0.tar.zst"))
		}, nil, []string{"zarf-package-alpha-amd64-1.0.0.tar.zst was added (alpha 1.0.0"}},
		{"archive removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "zarf-package-tool-amd64-1.0.0.tar.zst")); err != nil {
				t.Fatal(err)
			}
		}, nil, []string{"zarf-package-tool-amd64-1.0.0.tar.zst was removed (it held tool 1.0.0"}},
		{"option changed", nil, func(o *options.Request) { o.Exclude = []string{"tool"} }, []string{`exclude: the plan was saved with no value, this request gives ["tool"]`}},
		{"another key under the same path", func(t *testing.T, dir string) {
			copyFile(t, otherKey, filepath.Join(dir, "..", "key.pub"))
		}, nil, []string{"public_key: the file's content was sha256 "}},
		{"all at once", func(t *testing.T, dir string) {
			if err := craft.RewriteInPlace(filepath.Join(dir, "twin.tar"), twinB); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, "zarf-package-tool-amd64-1.0.0.tar.zst")); err != nil {
				t.Fatal(err)
			}
		}, func(o *options.Request) { o.Exclude = []string{"tool"} }, []string{"twin.tar was replaced", "tool-amd64-1.0.0.tar.zst was removed", "exclude: the plan"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyBundle(t, signedBundle)
			if err := os.WriteFile(filepath.Join(dir, "twin.tar"), twinA, 0o644); err != nil {
				t.Fatal(err)
			}
			key := filepath.Join(dir, "..", "key.pub")
			copyFile(t, publicKey, key)
			withKey := func(o *options.Request) { o.PublicKey = key }
			later := planReq(t, dir, withKey)
			if tc.set != nil {
				later = planReq(t, dir, withKey, tc.set)
			}
			_, _, replay := saveThenReplay(t, planReq(t, dir, withKey), later, func() {
				if tc.between != nil {
					tc.between(t, dir)
				}
			})
			if !replay.Failed {
				t.Fatalf("a stale plan replayed: %.400s", replay.Result)
			}
			probs := problems(t, replay.Result)
			if len(probs) != len(tc.want) {
				t.Errorf("%d problems, want %d: %+v", len(probs), len(tc.want), probs)
			}
			for _, w := range tc.want {
				found := false
				for _, p := range probs {
					found = found || p.Kind == planner.KindStale && strings.Contains(p.Message, w)
				}
				if !found {
					t.Errorf("no stale problem says %q: %+v", w, probs)
				}
			}
		})
	}
}

// A plan saved by another build of the planner is stale, and a file that
// is not a saved plan is refused by name.
func TestSavedPlanOfAnotherBuildOrNoneIsRefused(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	old := buildinfo.ID
	t.Cleanup(func() { buildinfo.ID = old })
	_, _, replay := saveThenReplay(t, planReq(t, dir), planReq(t, dir), func() { buildinfo.ID = "another-build" })
	if p := problems(t, replay.Result); !replay.Failed || len(p) != 1 || !strings.Contains(p[0].Message, "(build dev), this is dev (build another-build)") {
		t.Fatalf("another build: %s", replay.Result)
	}
	buildinfo.ID = old
	req := planReq(t, dir)
	req.SavedPlan = []byte(`{"kind":"Something"}`)
	resp, err := memoDaemon(t).Plan(context.Background(), carried(req))
	if err != nil {
		t.Fatal(err)
	}
	if p := problems(t, resp.Result); !resp.Failed || len(p) != 1 || p[0].Kind != planner.KindStale || !strings.Contains(p[0].Message, "the saved plan cannot be replayed: its kind is") {
		t.Fatalf("not a saved plan: %s", resp.Result)
	}
}

// A saved cluster-aware plan is stale when the cluster it assumed moved:
// here a snapshot (the live cluster, redeployed by the real zarf CLI, is
// the playbook test's).
func TestSavedClusterPlanFollowsTheCluster(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	snap := filepath.Join(t.TempDir(), "snapshot.json")
	write := func(c facts.Cluster) {
		b, _ := json.Marshal(c)
		if err := os.WriteFile(snap, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := facts.InstalledPackage{Name: "base", Version: "1.0.0", Healthy: true, Generation: 1, AggregateChecksum: "abc"}
	write(facts.Cluster{Name: "test", KubernetesVersion: "v1.31.0", NodeArchitectures: []string{"amd64"}, Packages: []facts.InstalledPackage{base}})
	withSnap := func(o *options.Request) { o.Snapshot = snap; o.Architecture = "" }
	_, first, replay := saveThenReplay(t, planReq(t, dir, withSnap), planReq(t, dir, withSnap), nil)
	if replay.Failed || !bytes.Equal(first.Result, replay.Result) {
		t.Fatalf("an unchanged cluster: %s", replay.Result)
	}
	_, _, replay = saveThenReplay(t, planReq(t, dir, withSnap), planReq(t, dir, withSnap), func() {
		moved := base
		moved.Generation, moved.Healthy, moved.Reason = 2, false, "component base failed"
		write(facts.Cluster{Name: "test", KubernetesVersion: "v1.31.0", NodeArchitectures: []string{"amd64"}, Packages: []facts.InstalledPackage{moved}, CRDs: []string{"widgets.example.com"}})
	})
	probs := problems(t, replay.Result)
	// The snapshot's file is named first (its content is declared to decide
	// the plan), then how the cluster it holds moved.
	want := []string{"option snapshot: the file's content was sha256 ", "package base was deployed again: generation 1 when the plan was saved, now 2", "package base was healthy when the plan was saved, now unhealthy (component base failed)", "CRD widgets.example.com is there now"}
	if !replay.Failed || len(probs) != len(want) {
		t.Fatalf("a moved cluster: %s", replay.Result)
	}
	for i, w := range want {
		if !strings.Contains(probs[i].Message, w) {
			t.Errorf("problem %d is %q, want %q", i, probs[i].Message, w)
		}
	}
}

// With public_key, signatures made by the real zarf CLI are verified and
// shown per package; a tampered zarf.yaml, another key, or (with
// require_signatures) an unsigned archive fails the plan naming it.
func TestSignaturesDecideBeforeAnythingDeploys(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	d := memoDaemon(t)
	plan := func(set ...func(*options.Request)) *service.Result {
		t.Helper()
		resp, err := d.Plan(context.Background(), carried(planReq(t, dir, set...)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := document.DecodeResult("the daemon's result", resp.Result)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	withKey := func(o *options.Request) { o.PublicKey = publicKey }
	res := plan(withKey)
	if res.Failed {
		t.Fatalf("signed directory with its key: %s", res.Msg)
	}
	got := map[string]string{}
	for _, it := range res.Plan.Packages {
		got[it.Name] = it.Signature
	}
	if got["base"] != facts.Verified || got["app"] != facts.Verified || got["tool"] != facts.Unsigned {
		t.Errorf("signature states %v", got)
	}
	if !strings.Contains(strings.Join(res.Plan.Warnings, "\n"), "zarf-package-tool-amd64-1.0.0.tar.zst (tool 1.0.0) is not signed") {
		t.Errorf("no warning for the unsigned archive: %v", res.Plan.Warnings)
	}
	if res := plan(); res.Failed || res.Plan.Packages[0].Signature != "" {
		t.Errorf("without a key nothing is checked: %+v", res.Plan.Packages[0])
	}
	only := func(t *testing.T, res *service.Result, pkg, says string) {
		t.Helper()
		if !res.Failed || len(res.Errors) != 1 || res.Errors[0].Kind != planner.KindSignature || res.Errors[0].Packages[0] != pkg || !strings.Contains(res.Errors[0].Message, says) {
			t.Fatalf("want one signature problem of %s saying %q, got %+v", pkg, says, res.Errors)
		}
	}
	only(t, plan(withKey, func(o *options.Request) { o.RequireSignatures = true }), "tool", "is not signed, and option require_signatures fails the plan")
	if res := plan(func(o *options.Request) { o.RequireSignatures = true }); !res.Failed || !strings.Contains(res.Msg, "give option public_key too") {
		t.Errorf("require_signatures without a key: %+v", res)
	}
	res = plan(func(o *options.Request) { o.PublicKey = otherKey })
	if !res.Failed || len(res.Errors) != 2 {
		t.Fatalf("another key: %+v", res.Errors)
	}
	// zarf.yaml edited after signing: checksums hold, the signature does not.
	src, err := os.ReadFile(filepath.Join(dir, "zarf-package-base-amd64-1.0.0.tar.zst"))
	if err != nil {
		t.Fatal(err)
	}
	forged, err := craft.Edit(src, "zarf.yaml", func(y []byte) []byte { return bytes.Replace(y, []byte("Signed base"), []byte("Forged base"), 1) })
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zarf-package-base-amd64-1.0.0.tar.zst"), forged, 0o644); err != nil {
		t.Fatal(err)
	}
	only(t, plan(withKey), "base", "zarf.bundle.sig does not verify zarf.yaml")
	if res := plan(); res.Failed {
		t.Errorf("without a key the forged archive is only a package: %s", res.Msg)
	}
	// A signature member given twice makes the archive unusable, so its
	// signature cannot be verified: require_signatures fails the plan on
	// it rather than plan without it.
	twice, err := craft.EditMembers(src, func(ms *[]craft.Member) {
		for _, m := range *ms {
			if m.Name == "zarf.bundle.sig" {
				*ms = append(*ms, m)
				return
			}
		}
		t.Fatal("the signed archive has no zarf.bundle.sig")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zarf-package-base-amd64-1.0.0.tar.zst"), twice, 0o644); err != nil {
		t.Fatal(err)
	}
	res = plan(withKey, func(o *options.Request) { o.RequireSignatures = true })
	var says []string
	for _, p := range res.Errors {
		if p.Kind == planner.KindSignature {
			says = append(says, p.Message)
		}
	}
	if !res.Failed || !strings.Contains(strings.Join(says, "\n"), "zarf-package-base-amd64-1.0.0.tar.zst cannot be used (integrity), so its signature could not be verified, and option require_signatures fails the plan on it") {
		t.Errorf("a twice-signed archive under require_signatures: %+v", res.Errors)
	}
	if res := plan(withKey); res.Failed && slices.ContainsFunc(res.Errors, func(p planner.Problem) bool {
		return strings.Contains(p.Message, "so its signature could not be verified")
	}) {
		t.Errorf("without require_signatures an unusable archive failed the plan on its signature: %+v", res.Errors)
	}
}

// A saved plan held to a policy is stale when the policy file under the
// same path now says something else, even when the plan would still pass.
func TestSavedPlanFollowsThePolicysContent(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(allowed string) {
		if err := os.WriteFile(pol, []byte("apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed: "+allowed+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("{}")
	withPolicy := func(o *options.Request) { o.Policy = pol }
	_, first, replay := saveThenReplay(t, planReq(t, dir, withPolicy), planReq(t, dir, withPolicy), func() { write("{registries: ['*']}") })
	if first.Failed {
		t.Fatalf("the plan under an empty policy failed: %s", first.Result)
	}
	p := problems(t, replay.Result)
	if !replay.Failed || len(p) != 1 || p[0].Kind != planner.KindStale || !strings.Contains(p[0].Message, "policy: the file's content was sha256 ") {
		t.Fatalf("a changed policy: %s", replay.Result)
	}
}

// The catalog says who signed what when given a key, and the catalog
// remembered for one key is never the answer for another.
func TestCatalogSaysWhoSigned(t *testing.T) {
	dir, _ := filepath.Abs(copyBundle(t, signedBundle))
	d := memoDaemon(t)
	catalog := func(key string) map[string]service.CatalogPackage {
		t.Helper()
		resp, err := d.Catalog(context.Background(), carriedCatalog(&contract.CatalogRequest{InspectRequest: contract.InspectRequest{Path: dir, UseCache: true}, PublicKey: key}))
		if err != nil {
			t.Fatal(err)
		}
		var c service.Catalog
		if err := json.Unmarshal(resp.Result, &c); err != nil {
			t.Fatal(err)
		}
		out := map[string]service.CatalogPackage{}
		for _, p := range c.Packages {
			out[p.Name] = p
		}
		return out
	}
	good := catalog(publicKey)
	if !good["base"].Signed || !strings.HasPrefix(good["base"].SignedBy, "sha256:") || good["app"].SignedBy != good["base"].SignedBy ||
		good["tool"].Signed || good["tool"].SignedBy != "" {
		t.Fatalf("with the key: %+v", good)
	}
	other := catalog(otherKey)
	if other["base"].SignedBy != "" || !strings.Contains(other["base"].SignatureError, "does not verify") {
		t.Fatalf("with another key: %+v", other["base"])
	}
	if none := catalog(""); none["base"].SignedBy != "" || none["base"].SignatureError != "" || !none["base"].Signed {
		t.Fatalf("without a key: %+v", none["base"])
	}
	if _, err := d.Catalog(context.Background(), carriedCatalog(&contract.CatalogRequest{InspectRequest: contract.InspectRequest{Path: dir}, PublicKey: filepath.Join(dir, "absent.pub")})); err == nil {
		t.Fatal("an absent key was accepted")
	}
}

// The memo answers by the directory's stamp before reading anything; a
// public key rewritten under the same path must still change the answer.
func TestMemoFollowsTheKeysContent(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	key := filepath.Join(t.TempDir(), "key.pub")
	copyFile(t, publicKey, key)
	d := memoDaemon(t)
	req := planReq(t, dir, func(o *options.Request) { o.PublicKey = key })
	for range 2 { // the second is answered by the stamp
		resp, err := d.Plan(context.Background(), carried(req))
		if err != nil || resp.Failed {
			t.Fatalf("with the signing key: %v %s", err, resp.Result)
		}
	}
	copyFile(t, otherKey, key)
	resp, err := d.Plan(context.Background(), carried(req))
	if err != nil {
		t.Fatal(err)
	}
	if p := problems(t, resp.Result); !resp.Failed || len(p) != 2 || p[0].Kind != planner.KindSignature {
		t.Fatalf("another key under the same path was answered from the memo: %s", resp.Result)
	}
}

// A catalog is answered by the directory's stamp the second time, and
// never after an archive was rewritten in place with its mtime kept.
func TestCatalogByStampNeverGoesStale(t *testing.T) {
	dir, _ := filepath.Abs(copyBundle(t, signedBundle))
	twinA, twinB := craft.Twins("twin", "1.0.0")
	if err := os.WriteFile(filepath.Join(dir, "twin.tar"), twinA, 0o644); err != nil {
		t.Fatal(err)
	}
	d := memoDaemon(t)
	catalog := func() string {
		t.Helper()
		resp, err := d.Catalog(context.Background(), carriedCatalog(&contract.CatalogRequest{InspectRequest: contract.InspectRequest{Path: dir, UseCache: true}}))
		if err != nil {
			t.Fatal(err)
		}
		return string(resp.Result)
	}
	first := catalog()
	hits, _ := d.memo.Stats()
	if again := catalog(); again != first {
		t.Fatal("an unchanged directory's catalog changed")
	}
	if after, _ := d.memo.Stats(); after != hits+1 {
		t.Fatalf("the second catalog was not remembered (%d hits, then %d)", hits, after)
	}
	if err := craft.RewriteInPlace(filepath.Join(dir, "twin.tar"), twinB); err != nil {
		t.Fatal(err)
	}
	if now := catalog(); now == first || !strings.Contains(now, "twin b") {
		t.Fatalf("a rewritten archive was catalogued as before")
	}
}

// The exploits of issue 27: a saved plan rewritten to add keys Ansible
// reads (host facts), or to say two things at once (a key given twice, a
// key spelled with other case, which Go and Python read differently), is
// refused, and what a replay answers is the plan made now, never the
// file's bytes.
func TestATamperedSavedPlanChangesNothingAReplayAnswers(t *testing.T) {
	dir := copyBundle(t, signedBundle)
	withKey := func(o *options.Request) { o.PublicKey = publicKey }
	saved, first, _ := saveThenReplay(t, planReq(t, dir, withKey), planReq(t, dir, withKey), nil)
	edit := func(from, to string, n int) []byte {
		if !bytes.Contains(saved, []byte(from)) {
			t.Fatalf("the saved plan has no %q", from)
		}
		return bytes.Replace(saved, []byte(from), []byte(to), n)
	}
	for _, c := range []struct {
		name   string
		plan   []byte
		saying string
	}{
		{"host facts in the result", edit(`"result": {`, `"result": {"ansible_facts": {"zarf_bin": "/tmp/evil"}, `, 1), `key "/result/ansible_facts": no such key`},
		{"a key given twice in the result", edit(`"result": {`, `"result": {"zarf_packages_to_deploy": [], `, 1), `key "/result/zarf_packages_to_deploy": the key is given twice`},
		{"a key spelled with other case", edit(`"result": {`, `"result": {"Zarf_packages_to_deploy": [], `, 1), `key "/result/Zarf_packages_to_deploy": no such key`},
		{"an option spelled with other case", edit(`"options": {`, `"options": {"Exclude": ["tool"], `, 1), `key "/options/Exclude": no such key`},
		{"a key given twice in the plan", edit(`"plan_digest": `, `"plan_digest": "x", "plan_digest": `, 1), `the key is given twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := planReq(t, dir, withKey)
			req.SavedPlan = c.plan
			resp, err := memoDaemon(t).Plan(context.Background(), carried(req))
			if err != nil {
				t.Fatal(err)
			}
			p := problems(t, resp.Result)
			if !resp.Failed || len(p) != 1 || p[0].Kind != planner.KindStale || !strings.Contains(p[0].Message, c.saying) {
				t.Fatalf("got %s; want one stale problem saying %q", resp.Result, c.saying)
			}
			if bytes.Contains(resp.Result, []byte("ansible_facts")) && !strings.Contains(c.saying, "ansible_facts") {
				t.Errorf("the answer carries ansible_facts: %s", resp.Result)
			}
		})
	}
	// A result edited in a way the comparison reads past (its reasons,
	// which are words) still answers with the plan made now.
	reworded := edit(`"reasons": [`, `"reasons": ["approved by nobody", `, 1)
	req := planReq(t, dir, withKey)
	req.SavedPlan = reworded
	resp, err := memoDaemon(t).Plan(context.Background(), carried(req))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Failed || !bytes.Equal(resp.Result, first.Result) || bytes.Contains(resp.Result, []byte("approved by nobody")) {
		t.Fatalf("a reworded saved plan: %s\nwant the plan made now: %s", resp.Result, first.Result)
	}
}

// A bundle and its key carried to another place (another mount point,
// another user's home): the saved plan replays fresh there, answering
// with the plan made there; one archive rewritten there is stale, naming
// that archive alone.
func TestASavedPlanTravels(t *testing.T) {
	twinA, twinB := craft.Twins("twin", "1.0.0")
	here := copyBundle(t, signedBundle)
	if err := os.WriteFile(filepath.Join(here, "twin.tar"), twinA, 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, publicKey, filepath.Join(here, "..", "key.pub"))
	there := copyBundle(t, here)
	copyFile(t, publicKey, filepath.Join(there, "..", "cosign.pub"))
	keyAt := func(dir, name string) func(*options.Request) {
		return func(o *options.Request) { o.PublicKey = filepath.Join(dir, "..", name) }
	}
	// Saved with the default architecture, replayed with it given.
	saveReq := planReq(t, here, keyAt(here, "key.pub"), func(o *options.Request) { o.Architecture = "" })
	_, _, replay := saveThenReplay(t, saveReq, planReq(t, there, keyAt(there, "cosign.pub")), nil)
	if replay.Failed {
		t.Fatalf("the same bundle elsewhere is stale: %s", replay.Result)
	}
	if !strings.Contains(string(replay.Result), there) || strings.Contains(string(replay.Result), here+"/") {
		t.Errorf("the replay answers with paths of the saved place, not this one: %.600s", replay.Result)
	}
	_, _, replay = saveThenReplay(t, saveReq, planReq(t, there, keyAt(there, "cosign.pub")), func() {
		if err := craft.RewriteInPlace(filepath.Join(there, "twin.tar"), twinB); err != nil {
			t.Fatal(err)
		}
	})
	probs := problems(t, replay.Result)
	if !replay.Failed || len(probs) != 1 || !strings.Contains(probs[0].Message, "archive twin.tar was replaced") {
		t.Fatalf("one archive rewritten elsewhere: %+v; want that archive alone", probs)
	}
}
