package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

const head = "apiVersion: colonel-byte.dev/v1alpha1\nkind: MaximalPolicy\n"

func TestDecodeNamesTheLineAndField(t *testing.T) {
	tests := []struct {
		name, doc string
		field     string
		line      int
	}{
		{"unknown field", head + "allowed:\n  namespace: [a]\n", "allowed.namespace", 4},
		{"unknown top field", head + "allowed: {}\nextra: 1\n", "extra", 4},
		{"a list that is a string", head + "allowed:\n  registries: docker.io\n", "allowed.registries", 4},
		{"an empty pattern", head + "allowed:\n  crd_groups:\n    - example.com\n    - \"\"\n", "allowed.crd_groups[1]", 6},
		{"a wildcard switch that is a string", head + "allowed:\n  cluster_rbac_wildcards: \"no\"\n", "allowed.cluster_rbac_wildcards", 4},
		{"another kind", "apiVersion: colonel-byte.dev/v1alpha1\nkind: Policy\nallowed: {}\n", "kind", 2},
		{"no allowed", head, "allowed", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.doc), "p.yaml")
			fe, ok := err.(*FieldError)
			if !ok || fe.Field != tt.field || fe.Line != tt.line {
				t.Fatalf("got %v; want an error at line %d, field %s", err, tt.line, tt.field)
			}
		})
	}
}

func TestSchemaAgreesWithDecode(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("../../docs/policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"everything":      head + "allowed:\n  namespaces: [a, 'team-*']\n  crd_groups: ['*.example.com']\n  cluster_scoped_kinds: [PriorityClass]\n  registries: ['127.0.0.1:*']\n  cluster_rbac_wildcards: false\n",
		"nothing bounded": head + "allowed: {}\n",
		"unknown field":   head + "allowed: {namespace: [a]}\n",
		"empty pattern":   head + "allowed: {registries: ['']}\n",
		"wrong kind":      "apiVersion: colonel-byte.dev/v1alpha1\nkind: Other\nallowed: {}\n",
		"string switch":   head + "allowed: {cluster_rbac_wildcards: 'false'}\n",
		"no allowed":      head,
	}
	for name, doc := range docs {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := sch.Validate(inst)
		_, decodeErr := Decode([]byte(doc), "p.yaml")
		if (schemaErr == nil) != (decodeErr == nil) {
			t.Errorf("%s: schema says %v, Decode says %v", name, schemaErr, decodeErr)
		}
	}
}

func origin(kind, name string) facts.Origin {
	return facts.Origin{Component: "c", File: "manifests/m-0.yaml", APIVersion: "x/v1", Kind: kind, Name: name}
}

func TestCheckAllowsWithinAndRefusesBeyond(t *testing.T) {
	contents := &facts.Contents{Claims: facts.Claims{
		Namespaces:    []facts.NamespaceClaim{{Name: "team-a", Objects: []facts.Origin{origin("ConfigMap", "x")}}, {Name: "kube-system", Objects: []facts.Origin{origin("ConfigMap", "y")}}},
		CRDs:          []facts.CRDClaim{{Name: "things.example.com", Group: "example.com", Origin: origin("CustomResourceDefinition", "things.example.com")}},
		ClusterScoped: []facts.Origin{{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Name: "p"}, {APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "s"}},
		Registries:    []facts.RegistryClaim{{Registry: "docker.io", Images: []string{"c: docker.io/x:1"}}},
		ClusterRBAC:   []facts.RBACClaim{{Role: "r", Binding: origin("ClusterRoleBinding", "b"), Rules: []facts.Rule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get"}}}, Wildcard: true}},
		Unknown:       []facts.UnknownClaim{{Kind: facts.UnknownScope, Subject: "cert-manager.io/ClusterIssuer", Origin: origin("ClusterIssuer", "ca")}},
	}}
	loose, err := Decode([]byte(head+"allowed:\n  namespaces: ['*']\n  crd_groups: ['*']\n  cluster_scoped_kinds: ['*']\n  registries: ['*']\n  cluster_rbac_wildcards: true\n"), "loose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if v := loose.Check("p", contents); len(v) != 0 {
		t.Fatalf("a policy allowing everything refused %v", v)
	}
	strict, err := Decode([]byte(head+"allowed:\n  namespaces: ['team-*']\n  crd_groups: ['*.example.com']\n  cluster_scoped_kinds: [PriorityClass]\n  registries: [registry.example.com]\n  cluster_rbac_wildcards: false\n"), "strict.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range strict.Check("p", contents) {
		got = append(got, v.Claim+" | "+v.Rule)
	}
	want := []string{
		"namespace kube-system | not allowed by strict.yaml line 4 (allowed.namespaces: [team-*])",
		"CRD things.example.com of group example.com | not allowed by strict.yaml line 5 (allowed.crd_groups: [*.example.com])",
		"cluster-scoped kind storage.k8s.io/StorageClass | not allowed by strict.yaml line 6 (allowed.cluster_scoped_kinds: [PriorityClass])",
		"registry docker.io (image docker.io/x:1) | not allowed by strict.yaml line 7 (allowed.registries: [registry.example.com])",
		"a cluster-wide RBAC wildcard (ClusterRole r grants verbs [get] on resources [*] of groups [*]) | forbidden by strict.yaml line 8 (allowed.cluster_rbac_wildcards: false)",
		"what cannot be known from the archive (cert-manager.io/ClusterIssuer: ) | it may be cluster-scoped, which strict.yaml line 6 (allowed.cluster_scoped_kinds: [PriorityClass]) does not allow",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\ngot  %q\nwant %q", got, want)
	}
}

func TestAPolicyThatBoundsNothingRefusesNothingUnknown(t *testing.T) {
	p, err := Decode([]byte(head+"allowed:\n  cluster_rbac_wildcards: true\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := &facts.Contents{Claims: facts.Claims{Unknown: []facts.UnknownClaim{{Kind: facts.UnknownRender, Subject: "chart x"}, {Kind: facts.UnknownRBAC, Subject: "ClusterRole/y"}}}}
	if v := p.Check("p", c); len(v) != 0 {
		t.Fatalf("got %v; want none", v)
	}
	if v := p.Check("p", nil); len(v) != 0 {
		t.Fatalf("unread contents under no bound: got %v; want none", v)
	}
}

// A policy nested deeper than facts.MaxDepth is refused before it is
// decoded, naming where the level too deep starts.
func TestDecodeRefusesADeepPolicy(t *testing.T) {
	doc := head + "allowed: {}\n" + craft.Nested("x", craft.FlowSequences, 10000)
	_, err := Decode([]byte(doc), "p.yaml")
	want := "the policy nests sequences and mappings more than 64 deep (line 4, column "
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v; want one saying %q", err, want)
	}
}
