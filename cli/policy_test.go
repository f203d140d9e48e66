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

// Each fixture package, planned alone, is refused by a policy that
// bounds one of its claims, naming the claim and the object behind it.
func TestAPolicyRefusesEachPackageByTheClaimItExceeds(t *testing.T) {
	tests := []struct {
		pkg, policy string
		want        []string
	}{
		{"widgets", "  namespaces: [widgets-*-ns]\n", []string{"claims a new namespace widgets-system through Namespace/widgets-system (component operator, manifests/widgets-0.yaml)", "line 4 (allowed.namespaces: [widgets-*-ns])"}},
		{"widgets", "  registries: [registry.example.com]\n", []string{"claims registry 127.0.0.1:47301 (image 127.0.0.1:47301/demo/widgets-operator:1.0.0)"}},
		{"liar", "  crd_groups: [charts.example.com]\n", []string{"claims CRD sprockets.example.com of group example.com through CustomResourceDefinition/sprockets.example.com (component crds, manifests/sprockets-0.yaml)"}},
		{"gadgets", "  cluster_scoped_kinds: [PriorityClass, ClusterRoleBinding]\n", []string{"claims cluster-scoped kind rbac.authorization.k8s.io/ClusterRole through ClusterRole/gadgets-controller (component gadgets, charts/gadgets-0.3.0.tgz: templates/rbac.yaml)"}},
	}
	for _, tt := range tests {
		t.Run(tt.pkg+" "+strings.TrimSpace(tt.policy), func(t *testing.T) {
			// gadgets needs widgets; widgets is allowed everything here
			// but the bounded field, which it does not touch.
			doc := planWithPolicy(t, writePolicy(t, tt.policy), "--packages", tt.pkg)
			if !doc.Failed {
				t.Fatalf("%s was planned under %q", tt.pkg, tt.policy)
			}
			for _, e := range doc.Errors {
				if e.Kind != "policy" || e.Packages[0] != tt.pkg {
					t.Errorf("error %+v names another package or kind", e)
				}
			}
			for _, w := range tt.want {
				found := false
				for _, e := range doc.Errors {
					found = found || strings.Contains(e.Message, w)
				}
				if !found {
					t.Errorf("no error says %q: %+v", w, doc.Errors)
				}
			}
		})
	}
}
