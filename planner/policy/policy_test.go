package policy

import (
	"os"
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
		says      string
	}{
		{"an unknown field", head + "allowed:\n  namespace: [a]\n", "allowed.namespace", 4, "is not a field of allowed (namespaces, crd_groups, cluster_scoped_kinds, registries, commands, host_paths, cluster_rbac_wildcards, actions, uncarried_images)"},
		{"an unknown top field", head + "allowed: {}\nextra: 1\n", "extra", 4, "is not a policy field (apiVersion, kind, allowed, denied, crd_upgrade_waivers)"},
		{"waivers that are a mapping", head + "crd_upgrade_waivers:\n  crd: a.example.com\n", "crd_upgrade_waivers", 4, "must be a list of {crd, reason}"},
		{"a waiver without a reason", head + "crd_upgrade_waivers:\n  - crd: a.example.com\n", "crd_upgrade_waivers[0].reason", 4, "is missing: a waiver says why"},
		{"a waiver without a CRD", head + "crd_upgrade_waivers:\n  - reason: migrated by hand\n", "crd_upgrade_waivers[0].crd", 4, "is missing"},
		{"a waiver of no CRD name", head + "crd_upgrade_waivers:\n  - crd: Not_A_Name\n    reason: x\n", "crd_upgrade_waivers[0].crd", 4, "must be a CRD's name"},
		{"a waiver's reason that is a number", head + "crd_upgrade_waivers:\n  - crd: a.example.com\n    reason: 7\n", "crd_upgrade_waivers[0].reason", 5, "say why the check is waived"},
		{"a waiver's unknown field", head + "crd_upgrade_waivers:\n  - crd: a.example.com\n    reason: x\n    until: 2027\n", "crd_upgrade_waivers[0].until", 6, "is not a field of a waiver (crd, reason)"},
		{"a CRD waived twice", head + "crd_upgrade_waivers:\n  - {crd: a.example.com, reason: x}\n  - {crd: a.example.com, reason: y}\n", "crd_upgrade_waivers[1].crd", 5, "a.example.com is waived twice"},
		{"a list that is a string", head + "allowed:\n  registries: docker.io\n", "allowed.registries", 4, "must be a list of patterns"},
		{"an empty pattern", head + "allowed:\n  crd_groups:\n    - example.com\n    - \"\"\n", "allowed.crd_groups[1]", 6, "must be a non-empty string"},
		{"a wildcard switch that is a string", head + "allowed:\n  cluster_rbac_wildcards: \"no\"\n", "allowed.cluster_rbac_wildcards", 4, "must be true or false"},
		{"an actions switch that is a list", head + "allowed:\n  actions: [false]\n", "allowed.actions", 4, "must be true or false"},
		{"an uncarried_images switch that is a number", head + "allowed:\n  uncarried_images: 0\n", "allowed.uncarried_images", 4, "must be true or false"},
		{"a command that is a number", head + "allowed:\n  commands: [helm, 7]\n", "allowed.commands[1]", 4, "must be a non-empty string"},
		{"a relative host path", head + "allowed:\n  host_paths:\n    - /opt/zarf\n    - opt/zarf\n", "allowed.host_paths[1]", 6, "must be an absolute path (a relative one would be relative to wherever zarf runs), or * for any"},
		{"a host path with a star inside", head + "denied:\n  host_paths: ['/etc/*.d']\n", "denied.host_paths[0]", 4, "is a path prefix, not a pattern"},
		{"a switch under denied", head + "denied:\n  namespaces: [kube-system]\n  actions: false\n", "denied.actions", 5, "is not a field of denied (namespaces, crd_groups, cluster_scoped_kinds, registries, commands, host_paths)"},
		{"denied that is a list", head + "denied: [kube-system]\n", "denied", 3, "must be a mapping"},
		{"a field given twice", head + "allowed:\n  namespaces: [a]\n  namespaces: [b]\n", "", 0, `the policy gives the key "namespaces" twice in one mapping (lines 4 and 5)`},
		{"allowed given twice", head + "allowed: {}\ndenied: {}\nallowed: {}\n", "", 0, `the policy gives the key "allowed" twice in one mapping (lines 3 and 5)`},
		{"another kind", "apiVersion: colonel-byte.dev/v1alpha1\nkind: Policy\nallowed: {}\n", "kind", 2, "is not MaximalPolicy"},
		{"neither allowed nor denied", head, "allowed", 1, "is missing: a policy bounds claims with allowed, denied or both, or waives CRD upgrade checks (crd_upgrade_waivers)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.doc), "p.yaml")
			fe, ok := err.(*FieldError)
			if !ok || fe.Field != tt.field || fe.Line != tt.line || !strings.Contains(fe.Problem, tt.says) {
				t.Fatalf("got %v; want an error at line %d, field %s, saying %q", err, tt.line, tt.field, tt.says)
			}
		})
	}
}

// A policy of waivers alone bounds no claim and waives each CRD named,
// with its reason.
func TestDecodeTakesWaiversAlone(t *testing.T) {
	p, err := Decode([]byte(head+"crd_upgrade_waivers:\n  - crd: gizmos.example.com\n    reason: objects migrated by hand, CHG-1234\n"), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, ok := p.Waived("gizmos.example.com")
	if !ok || w.Reason != "objects migrated by hand, CHG-1234" || w.Line != 4 {
		t.Errorf("waiver %+v, %v", w, ok)
	}
	if _, ok := p.Waived("widgets.example.com"); ok {
		t.Error("a CRD the policy does not name is waived")
	}
	if _, ok := (*Policy)(nil).Waived("gizmos.example.com"); ok {
		t.Error("no policy waives")
	}
}

func TestDecodeTakesDeniedAloneOrBesideAllowed(t *testing.T) {
	for _, doc := range []string{
		head + "denied:\n  namespaces: [kube-system]\n",
		head + "allowed: {}\ndenied: {}\n",
		head + "allowed:\n  host_paths: ['/opt/zarf/', '*']\n  commands: ['*']\n  actions: true\n  uncarried_images: false\ndenied:\n  host_paths: [/]\n  commands: ['curl *']\n",
	} {
		if _, err := Decode([]byte(doc), "p.yaml"); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
}

func TestSchemaAgreesWithDecode(t *testing.T) {
	sch, err := jsonschema.NewCompiler().Compile("../../docs/policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"everything": head + "allowed:\n  namespaces: [a, 'team-*']\n  crd_groups: ['*.example.com']\n  cluster_scoped_kinds: [PriorityClass]\n  registries: ['127.0.0.1:*']\n  cluster_rbac_wildcards: false\n" +
			"  actions: true\n  commands: ['helm version']\n  host_paths: [/opt/zarf, '*']\n  uncarried_images: false\n" +
			"denied:\n  namespaces: [kube-system]\n  crd_groups: ['*.k8s.io']\n  cluster_scoped_kinds: [rbac.authorization.k8s.io/*]\n  registries: [docker.io]\n  commands: ['curl *']\n  host_paths: [/etc]\n",
		"nothing bounded":         head + "allowed: {}\n",
		"denied alone":            head + "denied: {namespaces: [kube-system]}\n",
		"unknown field":           head + "allowed: {namespace: [a]}\n",
		"unknown denied field":    head + "denied: {actions: false}\n",
		"empty pattern":           head + "allowed: {registries: ['']}\n",
		"relative host path":      head + "allowed: {host_paths: [opt]}\n",
		"host path with a star":   head + "denied: {host_paths: ['/opt/*']}\n",
		"only stars host path":    head + "allowed: {host_paths: ['**']}\n",
		"wrong kind":              "apiVersion: colonel-byte.dev/v1alpha1\nkind: Other\nallowed: {}\n",
		"string switch":           head + "allowed: {cluster_rbac_wildcards: 'false'}\n",
		"string actions":          head + "allowed: {actions: 'no'}\n",
		"neither allowed/denied":  head,
		"waivers alone":           head + "crd_upgrade_waivers: [{crd: gizmos.example.com, reason: migrated}]\n",
		"a waiver without reason": head + "crd_upgrade_waivers: [{crd: gizmos.example.com}]\n",
		"a waiver of no name":     head + "crd_upgrade_waivers: [{crd: Gizmos, reason: x}]\n",
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

func decode(t *testing.T, doc string) *Policy {
	t.Helper()
	p, err := Decode([]byte(doc), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checked is each violation as "claim | rule".
func checked(p *Policy, c *facts.Contents) []string {
	var got []string
	for _, v := range p.Check("p", c) {
		got = append(got, v.Claim+" | "+v.Rule)
	}
	return got
}

func TestCheckAllowsWithinAndRefusesBeyond(t *testing.T) {
	contents := &facts.Contents{Claims: facts.Claims{
		Namespaces:    []facts.NamespaceClaim{{Name: "team-a", Objects: []facts.Origin{origin("ConfigMap", "x")}}, {Name: "kube-system", Objects: []facts.Origin{origin("ConfigMap", "y")}}},
		CRDs:          []facts.CRDClaim{{Name: "things.example.com", Group: "example.com", Origin: origin("CustomResourceDefinition", "things.example.com")}},
		ClusterScoped: []facts.Origin{{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass", Name: "p"}, {APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "s"}},
		Registries:    []facts.RegistryClaim{{Registry: "docker.io", Images: []string{"c: docker.io/x:1"}}},
		ClusterRBAC:   []facts.RBACClaim{{Role: "r", Binding: origin("ClusterRoleBinding", "b"), Rules: []facts.Rule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get"}}}, Wildcard: true}},
		Unknown:       []facts.UnknownClaim{{Kind: facts.UnknownScope, Subject: "cert-manager.io/ClusterIssuer", Origin: origin("ClusterIssuer", "ca"), Affects: []string{facts.ClaimClusterScoped}}},
	}}
	loose := decode(t, head+"allowed:\n  namespaces: ['*']\n  crd_groups: ['*']\n  cluster_scoped_kinds: ['*']\n  registries: ['*']\n  cluster_rbac_wildcards: true\n")
	if v := loose.Check("p", contents); len(v) != 0 {
		t.Fatalf("a policy allowing everything refused %v", v)
	}
	strict := decode(t, head+"allowed:\n  namespaces: ['team-*']\n  crd_groups: ['*.example.com']\n  cluster_scoped_kinds: [PriorityClass]\n  registries: [registry.example.com]\n  cluster_rbac_wildcards: false\n")
	want := []string{
		"namespace kube-system | not allowed by p.yaml line 4 (allowed.namespaces: [team-*])",
		"CRD things.example.com of group example.com | not allowed by p.yaml line 5 (allowed.crd_groups: [*.example.com])",
		"cluster-scoped kind storage.k8s.io/StorageClass | not allowed by p.yaml line 6 (allowed.cluster_scoped_kinds: [PriorityClass])",
		"registry docker.io (image docker.io/x:1) | not allowed by p.yaml line 7 (allowed.registries: [registry.example.com])",
		"a cluster-wide RBAC wildcard (ClusterRole r grants verbs [get] on resources [*] of groups [*]) | forbidden by p.yaml line 8 (allowed.cluster_rbac_wildcards: false)",
		"what cannot be known from the archive (cert-manager.io/ClusterIssuer: ) | it may affect cluster_scoped, which p.yaml line 6 (allowed.cluster_scoped_kinds: [PriorityClass]) bounds",
	}
	if got := checked(strict, contents); !slices.Equal(got, want) {
		t.Errorf("violations:\ngot  %q\nwant %q", got, want)
	}
}

// Each case holds one package's hand-made claims to one policy body
// (under head, so allowed: is line 3) and lists every violation.
type checkCase struct {
	name   string
	policy string
	claims facts.Claims
	want   []string
}

func runChecks(t *testing.T, tests []checkCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decode(t, head+tt.policy)
			got := checked(p, &facts.Contents{Claims: tt.claims})
			if !slices.Equal(got, tt.want) {
				t.Errorf("violations:\ngot  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDeniedListsRefuseAndADenialWins(t *testing.T) {
	ns := func(names ...string) facts.Claims {
		var cl facts.Claims
		for _, n := range names {
			cl.Namespaces = append(cl.Namespaces, facts.NamespaceClaim{Name: n, Objects: []facts.Origin{origin("ConfigMap", n)}})
		}
		return cl
	}
	runChecks(t, []checkCase{
		{"a denied namespace is refused though allowed names it, once, by its denial",
			"allowed:\n  namespaces: ['*']\ndenied:\n  namespaces: [kube-system]\n", ns("app", "kube-system"),
			[]string{"namespace kube-system | denied by p.yaml line 6 (denied.namespaces: [kube-system])"}},
		{"a denied namespace the allowed list does not name is refused by its denial alone",
			"allowed:\n  namespaces: [app]\ndenied:\n  namespaces: [kube-*]\n", ns("app", "kube-public", "other"),
			[]string{"namespace kube-public | denied by p.yaml line 6 (denied.namespaces: [kube-*])", "namespace other | not allowed by p.yaml line 4 (allowed.namespaces: [app])"}},
		{"a denial names the pattern that matched at its own line",
			"denied:\n  namespaces:\n    - kube-system\n    - 'flux-*'\n", ns("flux-system"),
			[]string{"namespace flux-system | denied by p.yaml line 6 (denied.namespaces: [flux-*])"}},
		{"a policy of denied alone allows everything else",
			"denied:\n  namespaces: [kube-system]\n", ns("app", "team-a"), nil},
		{"a denied CRD group wins over an allowed one",
			"allowed:\n  crd_groups: ['*.example.com']\ndenied:\n  crd_groups: [bad.example.com]\n",
			facts.Claims{CRDs: []facts.CRDClaim{{Name: "a.good.example.com", Group: "good.example.com"}, {Name: "b.bad.example.com", Group: "bad.example.com", Origin: origin("CustomResourceDefinition", "b.bad.example.com")}}},
			[]string{"CRD b.bad.example.com of group bad.example.com | denied by p.yaml line 6 (denied.crd_groups: [bad.example.com])"}},
		{"a denied cluster-scoped group/Kind matches that group only",
			"denied:\n  cluster_scoped_kinds: [rbac.authorization.k8s.io/ClusterRole]\n",
			facts.Claims{ClusterScoped: []facts.Origin{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "r"}, {APIVersion: "example.com/v1", Kind: "ClusterRole", Name: "s"}}},
			[]string{"cluster-scoped kind rbac.authorization.k8s.io/ClusterRole | denied by p.yaml line 4 (denied.cluster_scoped_kinds: [rbac.authorization.k8s.io/ClusterRole])"}},
		{"a denied registry wins over an allowed one",
			"allowed:\n  registries: ['*']\ndenied:\n  registries: [docker.io]\n",
			facts.Claims{Images: []facts.ImageClaim{{Reference: "docker.io/library/nginx:1.25", Registry: "docker.io", Carried: true, Components: []string{"web"}}, {Reference: "quay.io/x:1", Registry: "quay.io", Carried: true, Components: []string{"web"}}}},
			[]string{"registry docker.io (image docker.io/library/nginx:1.25) | denied by p.yaml line 6 (denied.registries: [docker.io])"}},
	})
}

func TestRegistriesAreJudgedImageByImage(t *testing.T) {
	deploy := origin("Deployment", "web")
	runChecks(t, []checkCase{
		{"a carried image's registry names the component listing it",
			"allowed:\n  registries: [registry.example.com]\n",
			facts.Claims{
				Images:     []facts.ImageClaim{{Reference: "docker.io/library/nginx:1.25", Registry: "docker.io", Carried: true, Components: []string{"web"}, Used: []facts.Origin{deploy}}},
				Registries: []facts.RegistryClaim{{Registry: "docker.io", Images: []string{"web: nginx:1.25"}}},
			},
			[]string{"registry docker.io (image docker.io/library/nginx:1.25) | not allowed by p.yaml line 4 (allowed.registries: [registry.example.com])"}},
		{"an image the package does not carry names the workload using it, once for its registry",
			"allowed:\n  registries: [registry.example.com]\n",
			facts.Claims{
				Images:     []facts.ImageClaim{{Reference: "quay.io/jetstack/cert-manager-controller:v1.14.0", Registry: "quay.io", Used: []facts.Origin{deploy, origin("Job", "j")}}},
				Registries: []facts.RegistryClaim{{Registry: "quay.io", Images: []string{}}},
			},
			[]string{"registry quay.io (image quay.io/jetstack/cert-manager-controller:v1.14.0) | not allowed by p.yaml line 4 (allowed.registries: [registry.example.com])"}},
		{"a registry claim no image stands for is judged as it is, naming its first image",
			"allowed:\n  registries: [registry.example.com]\n",
			facts.Claims{Registries: []facts.RegistryClaim{{Registry: "ghcr.io", Images: []string{"c: ghcr.io/x:1"}}, {Registry: "empty.io"}}},
			[]string{"registry ghcr.io (image ghcr.io/x:1) | not allowed by p.yaml line 4 (allowed.registries: [registry.example.com])", "registry empty.io (image ) | not allowed by p.yaml line 4 (allowed.registries: [registry.example.com])"}},
		{"uncarried_images false refuses an image a workload uses that the package does not carry, and no other",
			"allowed:\n  uncarried_images: false\n",
			facts.Claims{Images: []facts.ImageClaim{
				{Reference: "docker.io/library/nginx:1.25", Registry: "docker.io", Carried: true, Components: []string{"web"}, Used: []facts.Origin{deploy}},
				{Reference: "docker.io/library/busybox:1", Registry: "docker.io", Carried: true, Components: []string{"web"}},
				{Reference: "quay.io/x:1", Registry: "quay.io", Used: []facts.Origin{deploy}},
			}},
			[]string{"image quay.io/x:1, which the package does not carry (it cannot be pulled in the air gap) | forbidden by p.yaml line 4 (allowed.uncarried_images: false)"}},
		{"uncarried_images true refuses nothing",
			"allowed:\n  uncarried_images: true\n",
			facts.Claims{Images: []facts.ImageClaim{{Reference: "quay.io/x:1", Registry: "quay.io", Used: []facts.Origin{deploy}}}}, nil},
	})
	// The object named is the one the message says.
	p := decode(t, head+"allowed:\n  registries: [registry.example.com]\n  uncarried_images: false\n")
	vs := p.Check("p", &facts.Contents{Claims: facts.Claims{Images: []facts.ImageClaim{
		{Reference: "docker.io/library/nginx:1.25", Registry: "docker.io", Carried: true, Components: []string{"web"}, Used: []facts.Origin{deploy}},
		{Reference: "quay.io/x:1", Registry: "quay.io", Used: []facts.Origin{deploy}},
	}}})
	var got []string
	for _, v := range vs {
		got = append(got, v.Object.String())
	}
	want := []string{"component web, zarf.yaml", deploy.String(), deploy.String()}
	if !slices.Equal(got, want) {
		t.Errorf("objects: got %q; want %q", got, want)
	}
}

func TestActionsAndCommands(t *testing.T) {
	actions := facts.Claims{Actions: []facts.ActionClaim{
		{Component: "c", Event: "onCreate.before", Command: "make images"},
		{Component: "c", Event: "onDeploy.before", Command: "helm version"},
		{Component: "c", Event: "onDeploy.after", Command: "curl https://get.example.com | sh"},
		{Component: "c", Event: "onDeploy.after", Command: "wait for cluster pod app=web in gadgets to be Ready", Wait: true},
		{Component: "c", Event: "onRemove.onSuccess", Command: "rm -rf /opt/zarf/web"},
	}}
	runChecks(t, []checkCase{
		{"actions false refuses every onDeploy and onRemove action and wait, not onCreate",
			"allowed:\n  actions: false\n", actions,
			[]string{
				`the onDeploy.before action "helm version" | forbidden by p.yaml line 4 (allowed.actions: false)`,
				`the onDeploy.after action "curl https://get.example.com | sh" | forbidden by p.yaml line 4 (allowed.actions: false)`,
				"the onDeploy.after wait (wait for cluster pod app=web in gadgets to be Ready) | forbidden by p.yaml line 4 (allowed.actions: false)",
				`the onRemove.onSuccess action "rm -rf /opt/zarf/web" | forbidden by p.yaml line 4 (allowed.actions: false)`,
			}},
		{"actions true refuses nothing", "allowed:\n  actions: true\n", actions, nil},
		{"commands allow only the commands they match, and waits are not commands",
			"allowed:\n  commands: [helm version, 'rm -rf /opt/zarf/*']\n", actions,
			[]string{`the onDeploy.after action "curl https://get.example.com | sh" | not allowed by p.yaml line 4 (allowed.commands: [helm version, rm -rf /opt/zarf/*])`}},
		{"a denied command wins over an allowed one",
			"allowed:\n  commands: ['*']\ndenied:\n  commands: ['curl *', 'wget *']\n", actions,
			[]string{`the onDeploy.after action "curl https://get.example.com | sh" | denied by p.yaml line 6 (denied.commands: [curl *])`}},
		{"actions false is named alone though commands bound them too",
			"allowed:\n  actions: false\n  commands: [helm version]\n", facts.Claims{Actions: actions.Actions[1:2]},
			[]string{`the onDeploy.before action "helm version" | forbidden by p.yaml line 4 (allowed.actions: false)`}},
		{"an event not known to be onCreate is held",
			"allowed:\n  commands: []\n", facts.Claims{Actions: []facts.ActionClaim{{Component: "c", Event: "onCreated.before", Command: "x"}, {Component: "c", Event: "onCreate", Command: "y"}}},
			[]string{`the onCreated.before action "x" | not allowed by p.yaml line 4 (allowed.commands: [])`}},
	})
}

func TestHostPaths(t *testing.T) {
	files := func(targets ...string) facts.Claims {
		var cl facts.Claims
		for _, tg := range targets {
			cl.HostFiles = append(cl.HostFiles, facts.HostFileClaim{Component: "c", Target: tg})
		}
		return cl
	}
	const allowOpt = "allowed:\n  host_paths: [/opt/zarf]\n"
	const notAllowed = " | not allowed by p.yaml line 4 (allowed.host_paths: [/opt/zarf])"
	runChecks(t, []checkCase{
		{"a prefix allows itself and what is under it, not a longer name beside it",
			allowOpt, files("/opt/zarf", "/opt/zarf/a/b", "/opt/zarfx", "/opt"),
			[]string{"host file /opt/zarfx" + notAllowed, "host file /opt" + notAllowed}},
		{"a target is cleaned before it is judged",
			allowOpt, files("/opt/zarf/../../etc/passwd", "/opt/zarf/./a//b", "/opt/zarf/x/../y"),
			[]string{"host file /opt/zarf/../../etc/passwd (that is /etc/passwd)" + notAllowed}},
		{"a prefix written with a trailing slash is the directory",
			"allowed:\n  host_paths: [/opt/zarf/]\n", files("/opt/zarf", "/opt/zarfx"),
			[]string{"host file /opt/zarfx | not allowed by p.yaml line 4 (allowed.host_paths: [/opt/zarf/])"}},
		{"a relative target is refused by any host_paths bound, as relative to where zarf runs",
			allowOpt, files("run/scripts/", "../opt/zarf/x"),
			[]string{
				"host file run/scripts/ | it is relative to where zarf runs, so p.yaml line 4 (allowed.host_paths: [/opt/zarf]) cannot hold it",
				"host file ../opt/zarf/x | it is relative to where zarf runs, so p.yaml line 4 (allowed.host_paths: [/opt/zarf]) cannot hold it",
			}},
		{"a target zarf resolves itself is no fixed path",
			"allowed:\n  host_paths: [/]\n", files("~/bin/x", "###ZARF_TEMP###/zarf-injector", "/etc/x"),
			[]string{
				"host file ~/bin/x | it is in the home directory of whoever runs zarf (~), so p.yaml line 4 (allowed.host_paths: [/]) cannot hold it",
				"host file ###ZARF_TEMP###/zarf-injector | it is in the directory zarf makes when it deploys (###ZARF_TEMP###), so p.yaml line 4 (allowed.host_paths: [/]) cannot hold it",
			}},
		{"symlinks are targets too",
			allowOpt, facts.Claims{HostFiles: []facts.HostFileClaim{{Component: "c", Target: "/opt/zarf/bin/tool", Symlinks: []string{"/opt/zarf/tool", "/usr/local/bin/tool"}}}},
			[]string{"symlink /usr/local/bin/tool to host file /opt/zarf/bin/tool" + notAllowed}},
		{"a denied prefix wins over an allowed one",
			"allowed:\n  host_paths: ['*']\ndenied:\n  host_paths: [/etc, /usr/local/bin]\n", files("/opt/x", "/etc", "/etc/ssh/sshd_config", "/etcetera", "/opt/../usr/local/bin/x"),
			[]string{
				"host file /etc | denied by p.yaml line 6 (denied.host_paths: [/etc])",
				"host file /etc/ssh/sshd_config | denied by p.yaml line 6 (denied.host_paths: [/etc])",
				"host file /opt/../usr/local/bin/x (that is /usr/local/bin/x) | denied by p.yaml line 6 (denied.host_paths: [/usr/local/bin])",
			}},
		{"a relative target may be what a denied prefix denies",
			"denied:\n  host_paths: [/etc]\n", files("etc/x"),
			[]string{"host file etc/x | it is relative to where zarf runs, so it may be what p.yaml line 4 (denied.host_paths: [/etc]) denies"}},
		{"a denied * denies every target, relative ones too",
			"denied:\n  host_paths: ['*']\n", files("x", "/y"),
			[]string{"host file x | denied by p.yaml line 4 (denied.host_paths: [*])", "host file /y | denied by p.yaml line 4 (denied.host_paths: [*])"}},
		{"an allowed * lets every target through, relative ones too",
			"allowed:\n  host_paths: ['*']\n", files("x", "~/y", "/z"), nil},
	})
}

func TestUnknownsAreRefusedOnlyForTheFieldsBoundingWhatTheyAffect(t *testing.T) {
	unknown := func(kind, subject string, affects ...string) facts.Claims {
		if affects == nil {
			affects = []string{}
		}
		return facts.Claims{Unknown: []facts.UnknownClaim{{Kind: kind, Subject: subject, Reason: "why", Origin: origin("X", "x"), Affects: affects}}}
	}
	const claim = "what cannot be known from the archive (s: why) | "
	runChecks(t, []checkCase{
		{"an unknown that affects no claim kind is never refused",
			"allowed:\n  namespaces: []\n  registries: []\n  cluster_rbac_wildcards: false\n  actions: false\ndenied:\n  crd_groups: ['*']\n",
			unknown(facts.UnknownRender, "s"), nil},
		{"a registries-only policy does not refuse an unknown affecting namespaces",
			"allowed:\n  registries: [registry.example.com]\n", unknown(facts.UnknownDeployTime, "s", facts.ClaimNamespaces), nil},
		{"a registries-only policy refuses an unknown affecting images",
			"allowed:\n  registries: [registry.example.com]\n", unknown(facts.UnknownRender, "s", facts.ClaimImages),
			[]string{claim + "it may affect images, which p.yaml line 4 (allowed.registries: [registry.example.com]) bounds"}},
		{"uncarried_images false bounds images too",
			"allowed:\n  uncarried_images: false\n", unknown(facts.UnknownRender, "s", facts.ClaimImages),
			[]string{claim + "it may affect images, which p.yaml line 4 (allowed.uncarried_images: false) bounds"}},
		{"the message names every bounding field of every affected kind, with its line",
			"allowed:\n  namespaces: [app]\n  cluster_rbac_wildcards: false\n  actions: false\n  commands: [x]\ndenied:\n  namespaces: [kube-system]\n  host_paths: [/etc]\n",
			unknown(facts.UnknownRender, "s", facts.ClaimNamespaces, facts.ClaimClusterRBAC, facts.ClaimImages, facts.ClaimHostFiles, facts.ClaimActions),
			[]string{claim + "it may affect namespaces, cluster_rbac, host_files and actions, which p.yaml line 4 (allowed.namespaces: [app]), p.yaml line 9 (denied.namespaces: [kube-system]), p.yaml line 5 (allowed.cluster_rbac_wildcards: false), p.yaml line 10 (denied.host_paths: [/etc]), p.yaml line 6 (allowed.actions: false) and p.yaml line 7 (allowed.commands: [x]) bound"}},
		{"an unknown whose Affects were not recorded may affect every kind",
			"allowed:\n  crd_groups: [example.com]\n", facts.Claims{Unknown: []facts.UnknownClaim{{Kind: facts.UnknownContents, Subject: "s", Reason: "why", Origin: origin("X", "x")}}},
			[]string{claim + "it may affect crds (what it affects was not recorded, so every kind is assumed), which p.yaml line 4 (allowed.crd_groups: [example.com]) bounds"}},
		{"a denied list refuses an unknown that may affect its kind",
			"denied:\n  namespaces: [kube-system]\n", unknown(facts.UnknownDeployTime, "s", facts.ClaimNamespaces),
			[]string{claim + "it may affect namespaces, which p.yaml line 4 (denied.namespaces: [kube-system]) bounds"}},
		{"an empty denied list refuses nothing",
			"denied:\n  namespaces: []\n", unknown(facts.UnknownDeployTime, "s", facts.ClaimNamespaces), nil},
		{"a scope unknown of an allowed kind is not refused",
			"allowed:\n  cluster_scoped_kinds: [ClusterIssuer]\n", unknown(facts.UnknownScope, "cert-manager.io/ClusterIssuer", facts.ClaimClusterScoped), nil},
		{"a scope unknown of a kind no denied pattern matches is not refused",
			"denied:\n  cluster_scoped_kinds: [rbac.authorization.k8s.io/*]\n", unknown(facts.UnknownScope, "cert-manager.io/ClusterIssuer", facts.ClaimClusterScoped), nil},
		{"a scope unknown whose kind no denied pattern matches passes beside an allowed *",
			"allowed:\n  cluster_scoped_kinds: ['*']\ndenied:\n  cluster_scoped_kinds: [PriorityClass, '*Issuer']\n", unknown(facts.UnknownScope, "s", facts.ClaimClusterScoped),
			nil},
		{"a scope unknown of a kind the allowed list does not match is refused",
			"allowed:\n  cluster_scoped_kinds: [PriorityClass]\n", unknown(facts.UnknownScope, "s", facts.ClaimClusterScoped),
			[]string{claim + "it may affect cluster_scoped, which p.yaml line 4 (allowed.cluster_scoped_kinds: [PriorityClass]) bounds"}},
	})
	// A scope unknown of a denied kind is refused naming the pattern
	// that denies its kind.
	p := decode(t, head+"allowed:\n  cluster_scoped_kinds: ['*']\ndenied:\n  cluster_scoped_kinds: [PriorityClass, '*Issuer']\n")
	got := checked(p, &facts.Contents{Claims: unknown(facts.UnknownScope, "cert-manager.io/ClusterIssuer", facts.ClaimClusterScoped)})
	want := []string{"what cannot be known from the archive (cert-manager.io/ClusterIssuer: why) | it may affect cluster_scoped, which p.yaml line 6 (denied.cluster_scoped_kinds: [*Issuer]) bounds"}
	if !slices.Equal(got, want) {
		t.Errorf("a scope unknown of a denied kind:\ngot  %q\nwant %q", got, want)
	}
}

// Every claim kind is bounded by the fields the brief names, and by no
// other: a policy bounding one field refuses an unknown affecting its
// kind, names that field, and refuses no unknown affecting another kind.
func TestEachFieldBoundsItsOwnClaimKind(t *testing.T) {
	fields := map[string]string{
		"allowed:\n  namespaces: [a]\n":               facts.ClaimNamespaces,
		"denied:\n  namespaces: [a]\n":                facts.ClaimNamespaces,
		"allowed:\n  crd_groups: [a]\n":               facts.ClaimCRDs,
		"denied:\n  crd_groups: [a]\n":                facts.ClaimCRDs,
		"allowed:\n  cluster_scoped_kinds: [a]\n":     facts.ClaimClusterScoped,
		"denied:\n  cluster_scoped_kinds: [a]\n":      facts.ClaimClusterScoped,
		"allowed:\n  registries: [a]\n":               facts.ClaimImages,
		"denied:\n  registries: [a]\n":                facts.ClaimImages,
		"allowed:\n  uncarried_images: false\n":       facts.ClaimImages,
		"allowed:\n  cluster_rbac_wildcards: false\n": facts.ClaimClusterRBAC,
		"allowed:\n  host_paths: [/a]\n":              facts.ClaimHostFiles,
		"denied:\n  host_paths: [/a]\n":               facts.ClaimHostFiles,
		"allowed:\n  actions: false\n":                facts.ClaimActions,
		"allowed:\n  commands: [a]\n":                 facts.ClaimActions,
		"denied:\n  commands: [a]\n":                  facts.ClaimActions,
	}
	covered := map[string]bool{}
	for body, kind := range fields {
		p := decode(t, head+body)
		field := strings.NewReplacer(":\n  ", ".", "\n", "").Replace(body)
		field, _, _ = strings.Cut(field, ":")
		for _, k := range facts.ClaimKinds() {
			u := facts.UnknownClaim{Kind: facts.UnknownRender, Subject: "s", Affects: []string{k}}
			got := checked(p, &facts.Contents{Claims: facts.Claims{Unknown: []facts.UnknownClaim{u}}})
			if k != kind {
				if len(got) != 0 {
					t.Errorf("%s refused an unknown affecting %s: %q", field, k, got)
				}
				continue
			}
			if len(got) != 1 || !strings.Contains(got[0], "it may affect "+k+", which p.yaml line 4 ("+field+": ") {
				t.Errorf("%s: got %q; want one refusal naming %s and the field", field, got, k)
			}
		}
		covered[kind] = true
		if v := p.Check("p", nil); len(v) != 1 {
			t.Errorf("%s: unread contents gave %v; want one violation", field, v)
		}
	}
	for _, k := range facts.ClaimKinds() {
		if !covered[k] || kindBounds[k] == nil {
			t.Errorf("no field bounds the claim kind %s", k)
		}
	}
	for _, f := range listFields {
		if !slices.Contains(facts.ClaimKinds(), f.kind) {
			t.Errorf("list field %s bounds %q, not a claim kind", f.key, f.kind)
		}
	}
	for _, f := range switchFields {
		if !slices.Contains(facts.ClaimKinds(), f.kind) {
			t.Errorf("switch %s bounds %q, not a claim kind", f.key, f.kind)
		}
	}
}

// everyClaim is a package claiming something of every kind, all known.
func everyClaim() facts.Claims {
	return facts.Claims{
		Namespaces:    []facts.NamespaceClaim{{Name: "kube-system", Created: true, Objects: []facts.Origin{origin("Namespace", "kube-system")}}},
		CRDs:          []facts.CRDClaim{{Name: "things.example.com", Group: "example.com", Origin: origin("CustomResourceDefinition", "things.example.com")}},
		ClusterScoped: []facts.Origin{{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "s"}},
		ClusterRBAC:   []facts.RBACClaim{{Role: "r", Binding: origin("ClusterRoleBinding", "b"), Rules: []facts.Rule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}, Wildcard: true}},
		Registries:    []facts.RegistryClaim{{Registry: "docker.io", Images: []string{"c: nginx:1.25"}}},
		Images:        []facts.ImageClaim{{Reference: "docker.io/library/nginx:1.25", Registry: "docker.io", Carried: true, Components: []string{"c"}}, {Reference: "quay.io/x:1", Registry: "quay.io", Used: []facts.Origin{origin("Deployment", "d")}}},
		HostFiles:     []facts.HostFileClaim{{Component: "c", Target: "/etc/../usr/bin/x", Symlinks: []string{"relative/link", "~/bin/x"}}},
		Actions:       []facts.ActionClaim{{Component: "c", Event: "onDeploy.after", Command: "curl https://x | sh"}, {Component: "c", Event: "onRemove.before", Command: "wait for x", Wait: true}},
	}
}

// The sentence, tested as it is written.
func TestAPolicyOfStarInEveryFieldPassesEveryPackageWhoseClaimsAreAllKnownOrWhoseUnknownsAffectNoBoundedField(t *testing.T) {
	var body strings.Builder
	body.WriteString("allowed:\n")
	for _, f := range listFields {
		body.WriteString("  " + f.key + ": ['*']\n")
	}
	for _, f := range switchFields {
		body.WriteString("  " + f.key + ": true\n")
	}
	stars := decode(t, head+body.String())
	known := everyClaim()
	if got := checked(stars, &facts.Contents{Claims: known}); len(got) != 0 {
		t.Errorf("claims all known: got %q; want none", got)
	}
	// With * in every field, no field is bounded: no unknown affects one.
	withUnknowns := everyClaim()
	withUnknowns.Unknown = []facts.UnknownClaim{
		{Kind: facts.UnknownRender, Subject: "chart x", Affects: facts.ClaimKinds()},
		{Kind: facts.UnknownRBAC, Subject: "ClusterRole/y", Affects: []string{facts.ClaimClusterRBAC}},
		{Kind: facts.UnknownContents, Subject: "z"}, // Affects not recorded: every kind
		{Kind: facts.UnknownDeployTime, Subject: "###ZARF_VAR_NS###", Affects: []string{}},
	}
	if got := checked(stars, &facts.Contents{Claims: withUnknowns}); len(got) != 0 {
		t.Errorf("unknowns affecting no bounded field: got %q; want none", got)
	}
	if got := checked(stars, nil); len(got) != 0 {
		t.Errorf("unread contents under no bound: got %q; want none", got)
	}
	// * in every list with one switch false: the unknowns that affect
	// only unbounded kinds still pass, the one affecting the switch's
	// kind (or every kind) does not.
	bounded := decode(t, strings.Replace(head+body.String(), "cluster_rbac_wildcards: true", "cluster_rbac_wildcards: false", 1))
	someUnknowns := facts.Claims{Unknown: []facts.UnknownClaim{
		{Kind: facts.UnknownRender, Subject: "a", Affects: []string{facts.ClaimNamespaces, facts.ClaimImages, facts.ClaimHostFiles, facts.ClaimActions}},
		{Kind: facts.UnknownRBAC, Subject: "b", Affects: []string{facts.ClaimClusterRBAC}},
		{Kind: facts.UnknownContents, Subject: "c"},
	}}
	var subjects []string
	for _, v := range bounded.Check("p", &facts.Contents{Claims: someUnknowns}) {
		subjects = append(subjects, v.Claim)
	}
	if want := []string{"what cannot be known from the archive (b: )", "what cannot be known from the archive (c: )"}; !slices.Equal(subjects, want) {
		t.Errorf("got %q; want %q", subjects, want)
	}
}

func TestAPolicyThatBoundsNothingRefusesNothingUnknown(t *testing.T) {
	p := decode(t, head+"allowed:\n  cluster_rbac_wildcards: true\n  actions: true\n  uncarried_images: true\ndenied:\n  namespaces: []\n")
	c := &facts.Contents{Claims: facts.Claims{Unknown: []facts.UnknownClaim{{Kind: facts.UnknownRender, Subject: "chart x"}, {Kind: facts.UnknownRBAC, Subject: "ClusterRole/y"}}}}
	if v := p.Check("p", c); len(v) != 0 {
		t.Fatalf("got %v; want none", v)
	}
	if v := p.Check("p", nil); len(v) != 0 {
		t.Fatalf("unread contents under no bound: got %v; want none", v)
	}
}

func TestAMessageNamesThePackageClaimObjectAndLine(t *testing.T) {
	p := decode(t, head+"allowed:\n  actions: true\ndenied:\n  commands:\n    - helm *\n    - 'curl *'\n")
	vs := p.Check("web", &facts.Contents{Claims: facts.Claims{Actions: []facts.ActionClaim{{Component: "setup", Event: "onDeploy.before", Command: "curl -sSL https://get.example.com/install.sh | sh"}}}})
	if len(vs) != 1 {
		t.Fatalf("got %v; want one violation", vs)
	}
	want := `package web claims the onDeploy.before action "curl -sSL https://get.example.com/install.sh | sh" through component setup, zarf.yaml, beyond the policy: denied by p.yaml line 8 (denied.commands: [curl *])`
	if got := vs[0].Message(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
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

// readmePolicy is the first YAML block of README's section headed
// heading, decoded as a policy and validated against
// docs/policy.schema.json.
func readmePolicy(t *testing.T, heading string) *Policy {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n"+heading+"\n")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	doc, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("README has no YAML block under %q", heading)
	}
	p, err := Decode([]byte(doc), "policy.yaml")
	if err != nil {
		t.Fatalf("README's policy under %q: %v", heading, err)
	}
	sch, err := jsonschema.NewCompiler().Compile("../../docs/policy.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("README's policy under %q against the schema: %v", heading, err)
	}
	return p
}

// The policy README shows decodes, passes the schema, and denies as the
// README says it does.
func TestTheREADMEPolicyIsValidAndDeniesAsItSays(t *testing.T) {
	p := readmePolicy(t, "## A maximal policy")
	got := checked(p, &facts.Contents{Claims: facts.Claims{Namespaces: []facts.NamespaceClaim{{Name: "kube-public"}}}})
	want := "denied by policy.yaml line 14 (denied.namespaces: [kube-*])"
	if len(got) != 1 || !strings.HasSuffix(got[0], want) {
		t.Errorf("got %q; want the rule README quotes, %q", got, want)
	}
}

// The waiver README's CRD upgrade section shows decodes, passes the
// schema, and waives the CRD it names, with a reason.
func TestTheREADMEWaiverIsValid(t *testing.T) {
	p := readmePolicy(t, "### CRD upgrades that keep the cluster's data")
	if w, ok := p.Waived("gizmos.example.com"); !ok || w.Reason == "" {
		t.Errorf("README's waiver waives %+v", p.CRDUpgradeWaivers)
	}
}
