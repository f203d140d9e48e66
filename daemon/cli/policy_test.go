package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const policyHead = "apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\nallowed:\n"

func writePolicy(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(p, []byte(policyHead+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func planWithPolicy(t *testing.T, policy string, args ...string) planDoc {
	t.Helper()
	code, out, stderr := run(t, append([]string{"plan", catalogDir, "-o", "json", "--architecture", "amd64", "--policy", policy}, args...)...)
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, stdout is not one JSON object: %v\n%s%s", code, err, out, stderr)
	}
	if (code == ExitOK) == doc.Failed {
		t.Fatalf("exit %d with failed=%v", code, doc.Failed)
	}
	return doc
}

func TestAPolicyThatAllowsEveryClaimPlansTheBundle(t *testing.T) {
	doc := planWithPolicy(t, writePolicy(t, `  namespaces: [liar, widgets-system, "gadgets*"]
  crd_groups: ["example.com", "*.example.com"]
  cluster_scoped_kinds: [PriorityClass, ClusterRole, rbac.authorization.k8s.io/ClusterRoleBinding]
  registries: ["127.0.0.1:*"]
  cluster_rbac_wildcards: true
`))
	if doc.Failed || len(doc.Packages) != 3 {
		t.Fatalf("got failed=%v %q; want the three packages planned", doc.Failed, doc.Msg)
	}
}

func TestAPolicyRefusesEachClaimBeyondItAllAtOnce(t *testing.T) {
	doc := planWithPolicy(t, writePolicy(t, `  namespaces: [widgets-system, "gadgets*"]
  crd_groups: [example.com]
  cluster_scoped_kinds: [ClusterRole, rbac.authorization.k8s.io/ClusterRoleBinding]
  registries: ["127.0.0.1:47301"]
  cluster_rbac_wildcards: false
`))
	if !doc.Failed || len(doc.Packages) != 0 {
		t.Fatalf("a plan beyond the policy was not refused: %q", doc.Msg)
	}
	var got []string
	for _, e := range doc.Errors {
		if e.Kind != "policy" || len(e.Packages) != 1 {
			t.Errorf("error %+v: want kind policy naming one package", e)
		}
		got = append(got, e.Packages[0]+": "+e.Message)
	}
	// Each names the package, the claim, the object (component, file,
	// kind/name) and the policy line.
	want := []string{
		"liar: package liar claims namespace liar through component crds, manifests/sprockets, beyond the policy: not allowed by policy.yaml line 4 (allowed.namespaces: [widgets-system, gadgets*])",
		"gadgets: package gadgets claims CRD gadgets.charts.example.com of group charts.example.com through CustomResourceDefinition/gadgets.charts.example.com (component gadgets, charts/gadgets-0.3.0.tgz: crds/gadgets.yaml), beyond the policy: not allowed by policy.yaml line 5 (allowed.crd_groups: [example.com])",
		"gadgets: package gadgets claims cluster-scoped kind scheduling.k8s.io/PriorityClass through PriorityClass/gadgets-critical (component gadgets, charts/gadgets-0.3.0.tgz: templates/priorityclass.yaml), beyond the policy: not allowed by policy.yaml line 6 (allowed.cluster_scoped_kinds: [ClusterRole, rbac.authorization.k8s.io/ClusterRoleBinding])",
		"gadgets: package gadgets claims registry 127.0.0.1:47302 (image 127.0.0.1:47302/demo/worker:1.0.0) through component gadgets, zarf.yaml, beyond the policy: not allowed by policy.yaml line 7 (allowed.registries: [127.0.0.1:47301])",
		"gadgets: package gadgets claims a cluster-wide RBAC wildcard (ClusterRole gadgets-controller grants verbs [get list watch] on resources [*] of groups [*]) through ClusterRoleBinding/gadgets-controller (component gadgets, charts/gadgets-0.3.0.tgz: templates/rbac.yaml), beyond the policy: forbidden by policy.yaml line 8 (allowed.cluster_rbac_wildcards: false)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\ngot  %q\nwant %q", got, want)
	}
	if !strings.HasPrefix(doc.Msg, "no plan is possible (5 policy): ") {
		t.Errorf("msg %q", doc.Msg)
	}
	for _, e := range doc.Errors {
		if e.Packages[0] == "widgets" {
			t.Errorf("widgets is within the policy and was named: %s", e.Message)
		}
	}
}

func TestAPolicyRefusesOnlyThePackagesThePlanDeploys(t *testing.T) {
	doc := planWithPolicy(t, writePolicy(t, "  namespaces: [widgets-system]\n"), "--packages", "widgets")
	if doc.Failed || len(doc.Packages) != 1 {
		t.Fatalf("got failed=%v %q; want widgets planned alone", doc.Failed, doc.Msg)
	}
}

func TestAMalformedPolicyFailsNamingItsLine(t *testing.T) {
	doc := planWithPolicy(t, writePolicy(t, "  namespace: [a]\n"))
	if !doc.Failed || len(doc.Errors) != 1 || doc.Errors[0].Kind != "policy" || !strings.Contains(doc.Errors[0].Message, "line 4, field allowed.namespace: is not a field of allowed") ||
		!strings.Contains(doc.Errors[0].Message, "--policy") {
		t.Fatalf("got %+v", doc.Errors)
	}
}
