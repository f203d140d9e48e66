package claims_test

import (
	"bytes"
	"context"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// cluster is a Helm ClientProvider over a cluster that holds no object
// (found false: every get and list is not found) or, found true, every
// object asked for as the least an object can be (apiVersion, kind,
// name, namespace; a list of one, named chartrender.FoundName): the
// two clusters the renderer's two answers stand for, read through
// Helm's own lookup function.
type cluster struct{ found bool }

func (c cluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return &fakeResource{found: c.found, apiVersion: apiVersion, kind: kind}, true, nil
}

// fakeResource answers get and list; any other call panics (the embedded
// interface is nil): lookup makes none.
type fakeResource struct {
	dynamic.NamespaceableResourceInterface
	found            bool
	apiVersion, kind string
	namespace        string
}

func (r *fakeResource) Namespace(ns string) dynamic.ResourceInterface {
	c := *r
	c.namespace = ns
	return &c
}

func (r *fakeResource) object(name string) map[string]any {
	meta := map[string]any{"name": name, "labels": map[string]any{}, "annotations": map[string]any{}}
	if r.namespace != "" {
		meta["namespace"] = r.namespace
	}
	return map[string]any{"apiVersion": r.apiVersion, "kind": r.kind, "metadata": meta,
		"data": map[string]any{}, "spec": map[string]any{}, "status": map[string]any{}}
}

func (r *fakeResource) Get(_ context.Context, name string, _ metav1.GetOptions, _ ...string) (*unstructured.Unstructured, error) {
	if !r.found {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(r.kind)}, name)
	}
	return &unstructured.Unstructured{Object: r.object(name)}, nil
}

func (r *fakeResource) List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if !r.found {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(r.kind)}, "")
	}
	return &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": r.apiVersion, "kind": r.kind + "List", "metadata": map[string]any{}},
		Items: []unstructured.Unstructured{{Object: r.object(chartrender.FoundName)}}}, nil
}

// helmWith are the objects Helm's own engine renders of a chart archive
// as release demo in namespace demo, its lookups answered by c (by kind
// and name, as Kubernetes' client reads them), or its error.
func helmWith(t *testing.T, tgz []byte, c cluster) ([]string, error) {
	t.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, map[string]any{}, common.ReleaseOptions{Name: "demo", Namespace: "demo", IsInstall: true, Revision: 1}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.RenderWithClientProvider(ch, top, c)
	if err != nil {
		return nil, err
	}
	return objectsOf(t, files, "demo/"), nil
}

// objectsOf are the objects of rendered templates, by kind and name.
func objectsOf[B string | []byte](t *testing.T, files map[string]B, prefix string) []string {
	t.Helper()
	var out []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		rel := strings.TrimPrefix(name, prefix)
		if strings.HasSuffix(rel, "NOTES.txt") || strings.HasPrefix(path.Base(rel), "_") || strings.HasPrefix(rel, "crds/") {
			continue
		}
		objs, err := kubeObjects(t, name, []byte(files[name]))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, objs...)
	}
	slices.Sort(out)
	return out
}

// webhookTLS has the shape of a webhook chart's certificate (kyverno's,
// metrics-server's, cert-manager's webhook): the Secret a previous
// install made is looked up and its certificate reused, or a new CA is
// made; the Secret and the webhook configuration carrying its CA are
// rendered either way. reuse is how the template reads the Secret it
// finds.
func webhookTLS(reuse string) map[string]string {
	return map[string]string{"templates/webhook.yaml": `{{- $name := printf "%s-webhook-tls" .Release.Name }}
{{- $previous := lookup "v1" "Secret" .Release.Namespace $name }}
{{- $crt := "" }}{{- $key := "" }}
{{- if $previous }}
` + reuse + `
{{- else }}
{{- $ca := genCA "demo-webhook-ca" 365 }}
{{- $crt = $ca.Cert | b64enc }}{{- $key = $ca.Key | b64enc }}
{{- end }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ $name }}
  namespace: {{ .Release.Namespace }}
type: kubernetes.io/tls
data:
  tls.crt: {{ $crt | quote }}
  tls.key: {{ $key | quote }}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: {{ .Release.Name }}-webhook
webhooks:
  - name: validate.demo.example.com
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      caBundle: {{ $crt | quote }}
      service: {name: {{ .Release.Name }}-webhook, namespace: {{ .Release.Namespace }}}
`}
}

// reuseByIndex reads the found Secret's data as metrics-server's chart
// does (index): on the least object that exists, whose data is empty,
// it reads nothing.
const reuseByIndex = `{{- $crt = index $previous.data "tls.crt" }}{{- $key = index $previous.data "tls.key" }}`

// breaksOnIt reads deeper than the least object goes: the template
// breaks on it, and what it would render from a real object is not
// known.
const breaksOnIt = `{{- $crt = index $previous.spec.template "tls.crt" }}{{- $key = $crt }}`

// reuseByDig reads it with a default (dig): it renders either way.
const reuseByDig = `{{- $crt = dig "data" "tls.crt" "" $previous }}{{- $key = dig "data" "tls.key" "" $previous }}`

// failGuard refuses to install over an old controller, and ships a
// ClusterRole either way.
var failGuard = map[string]string{
	"templates/guard.yaml": `{{- if lookup "apps/v1" "Deployment" .Release.Namespace "old-controller" }}
{{- fail "remove the old controller (Deployment old-controller) before installing this chart" }}
{{- end }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: demo-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
`,
}

// sharedRole creates a ClusterRole and binds it cluster-wide only when
// the cluster does not hold the role already (another release's).
var sharedRole = map[string]string{
	"templates/sa.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: demo}\n",
	"templates/role.yaml": `{{- if not (lookup "rbac.authorization.k8s.io/v1" "ClusterRole" "" "shared-reader") }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: shared-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: shared-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: shared-reader}
subjects: [{kind: ServiceAccount, name: demo, namespace: {{ .Release.Namespace }}}]
{{- end }}
`,
}

// everyNamespace copies a ConfigMap into every namespace the cluster
// holds (a list lookup), as reflector-like charts do.
var everyNamespace = map[string]string{
	"templates/copies.yaml": `{{- range $ns := (lookup "v1" "Namespace" "" "").items }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-ca, namespace: {{ $ns.metadata.name }}}
data: {ca.crt: shared}
{{- end }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: demo-ca}
data: {ca.crt: shared}
`,
}

// migrationImage runs a migration Job, from another registry, only when
// an old Deployment exists.
var migrationImage = map[string]string{
	"templates/app.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: demo}
spec:
  selector: {matchLabels: {app: demo}}
  template:
    metadata: {labels: {app: demo}}
    spec: {containers: [{name: app, image: "registry.example/demo/app:1.0"}]}
{{- if lookup "apps/v1" "Deployment" .Release.Namespace "demo-legacy" }}
---
apiVersion: batch/v1
kind: Job
metadata: {name: demo-migrate}
spec:
  template:
    spec: {restartPolicy: Never, containers: [{name: migrate, image: "quay.io/demo/migrate:1.0"}]}
{{- end }}
`,
}

// generatedPassword makes a Secret only when the cluster has none (a
// password kept across upgrades): the release's namespace is written
// either way.
var generatedPassword = map[string]string{
	"templates/secret.yaml": `{{- if not (lookup "v1" "Secret" .Release.Namespace "demo-password") }}
apiVersion: v1
kind: Secret
metadata: {name: demo-password}
stringData: {password: {{ randAlphaNum 16 | quote }}}
{{- end }}
`,
}

// lookupUnknowns are the unknown claims of c that list lookups.
func lookupUnknowns(c facts.Contents) []facts.UnknownClaim {
	var out []facts.UnknownClaim
	for _, u := range c.Claims.Unknown {
		if len(u.Lookups) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// A chart's lookups are read twice, and its unknown affects exactly the
// claim kinds that differ between the renders; each render is what
// Helm's own engine renders against a cluster holding none of the
// objects, then one holding each as the least object there can be.
func TestALookupAffectsTheClaimKindsItsAnswerChanges(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		lookups []facts.Lookup
		affects []string
		reason  string // a substring of the unknown's reason
		// helmFails says Helm's engine fails when every object exists.
		helmFails bool
	}{
		{name: "a webhook reusing a previous Secret's certificate, read with a default",
			files: webhookTLS(reuseByDig), lookups: []facts.Lookup{{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "demo-webhook-tls"}},
			affects: []string{}, reason: "its claims are the same whether or not they exist"},
		{name: "a webhook reusing a previous Secret's certificate, read by index",
			files: webhookTLS(reuseByIndex), lookups: []facts.Lookup{{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "demo-webhook-tls"}},
			affects: []string{}, reason: "its claims are the same whether or not they exist"},
		{name: "a template that breaks on the least object that exists",
			files: webhookTLS(breaksOnIt), lookups: []facts.Lookup{{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "demo-webhook-tls"}},
			affects: facts.ClaimKinds(), reason: "its templates break on that object, so what it claims when they exist is not known", helmFails: true},
		{name: "a chart that fails when an old controller exists",
			files: failGuard, lookups: []facts.Lookup{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "old-controller"}},
			affects: []string{}, reason: "it fails: Helm would not install it then", helmFails: true},
		{name: "a Secret made only when the cluster has none, in the release's namespace",
			files: generatedPassword, lookups: []facts.Lookup{{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "demo-password"}},
			affects: []string{}, reason: "its claims are the same whether or not they exist"},
		{name: "a ClusterRole created and bound only when the cluster has none",
			files: sharedRole, lookups: []facts.Lookup{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "shared-reader"}},
			affects: []string{facts.ClaimClusterScoped, facts.ClaimClusterRBAC}, reason: "its cluster_scoped, cluster_rbac claims differ"},
		{name: "a migration Job whose image is used only when an old Deployment exists",
			files: migrationImage, lookups: []facts.Lookup{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "demo-legacy"}},
			affects: []string{facts.ClaimImages}, reason: "its images claims differ"},
		{name: "a ConfigMap copied into every namespace the cluster holds",
			files: everyNamespace, lookups: []facts.Lookup{{APIVersion: "v1", Kind: "Namespace"}},
			affects: []string{facts.ClaimNamespaces}, reason: "its namespaces claims differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tgz := rendertest.Chart(t, tt.files)
			req := claims.ChartRequest{Chart: tgz, Release: "demo", Namespace: "demo"}
			r, err := chartrender.Render(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			// The independent reading: Helm's engine and its lookup.
			want, err := helmWith(t, tgz, cluster{})
			if err != nil {
				t.Fatal(err)
			}
			if got := objectsOf(t, r.Files, ""); !slices.Equal(got, want) {
				t.Errorf("first render: %v; Helm against a cluster holding none of them renders %v", got, want)
			}
			if r.Found == nil {
				t.Fatal("no second render")
			}
			wantFound, err := helmWith(t, tgz, cluster{found: true})
			switch {
			case tt.helmFails && err == nil:
				t.Fatalf("Helm against a cluster holding each renders %v; the test expects it to fail", wantFound)
			case tt.helmFails && r.Found.Failed == "":
				t.Errorf("second render: %d files, stopped %q; Helm fails (%v)", len(r.Found.Files), r.Found.Stopped, err)
			case !tt.helmFails && err != nil:
				t.Fatal(err)
			case !tt.helmFails:
				if got := objectsOf(t, r.Found.Files, ""); !slices.Equal(got, wantFound) {
					t.Errorf("second render: %v; Helm against a cluster holding each renders %v", got, wantFound)
				}
			}
			if !slices.Equal(r.Lookups, tt.lookups) {
				t.Errorf("lookups %v; want %v", r.Lookups, tt.lookups)
			}

			pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}}}}}
			comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"charts/demo-1.0.0.tgz": tgz}}}
			c, err := claims.Collect(context.Background(), pkg, comps, claims.RenderFunc(chartrender.Render))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			us := lookupUnknowns(c)
			if len(us) != 1 {
				t.Fatalf("unknowns with lookups: %+v; want one", us)
			}
			u := us[0]
			if u.Kind != facts.UnknownRender || u.Subject != "chart demo" {
				t.Errorf("unknown %s %s; want render chart demo", u.Kind, u.Subject)
			}
			t.Logf("reason: %s", u.Reason)
			if !slices.Equal(u.Affects, tt.affects) {
				t.Errorf("affects %q; want %q (reason: %s)", u.Affects, tt.affects, u.Reason)
			}
			if !strings.Contains(u.Reason, tt.reason) {
				t.Errorf("reason %q; want it to say %q", u.Reason, tt.reason)
			}
			if !slices.Equal(u.Lookups, tt.lookups) {
				t.Errorf("unknown's lookups %v; want %v", u.Lookups, tt.lookups)
			}
			// The claims are the first render's: as if none existed.
			if got, want := claimedObjects(c), objectsOf(t, r.Files, ""); len(want) > 0 && !subset(want, got) {
				t.Errorf("claimed %v; want the first render's %v among them", got, want)
			}
		})
	}
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// What the collector makes of renders it cannot compare: every kind.
func TestALookupWhoseSecondRenderIsMissingOrStoppedAffectsEveryKind(t *testing.T) {
	tgz := rendertest.Chart(t, sharedRole)
	for name, tt := range map[string]struct {
		found  *claims.FoundRender
		late   bool // the render returns after the archive's budget
		reason string
	}{
		"no second render":                  {found: nil, reason: "it was not rendered as if the objects it looks up existed"},
		"a second render stopped":           {found: &claims.FoundRender{Stopped: "its templates took longer than the 10s both renders may take"}, reason: "it was stopped (its templates took longer"},
		"renders past the archive's budget": {late: true, reason: "its two renders could not be compared within the 200ms the archive's charts may take together"},
	} {
		t.Run(name, func(t *testing.T) {
			if tt.late {
				defer claims.SetArchiveRenderBudget(200 * time.Millisecond)()
			}
			render := claims.RenderFunc(func(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
				r, err := chartrender.Render(ctx, req)
				if tt.late {
					time.Sleep(300 * time.Millisecond)
				} else {
					r.Found = tt.found
				}
				return r, err
			})
			pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}}}}}
			comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"charts/demo-1.0.0.tgz": tgz}}}
			c, err := claims.Collect(context.Background(), pkg, comps, render)
			if err != nil {
				t.Fatal(err)
			}
			us := lookupUnknowns(c)
			if len(us) != 1 {
				t.Fatalf("unknowns with lookups: %+v; want one", us)
			}
			t.Logf("%s", us[0].Reason)
			if !slices.Equal(us[0].Affects, facts.ClaimKinds()) || !strings.Contains(us[0].Reason, tt.reason) {
				t.Errorf("affects %q, reason %q; want every kind, and %q", us[0].Affects, us[0].Reason, tt.reason)
			}
		})
	}
}

// A chart that calls no lookup is rendered once, and has no lookup
// unknown.
func TestAChartWithoutLookupRendersOnce(t *testing.T) {
	r, err := chartrender.Render(context.Background(), claims.ChartRequest{Chart: rendertest.Chart(t, certManagerShaped), Release: "demo", Namespace: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cluster || r.Found != nil || len(r.Lookups) != 0 {
		t.Errorf("cluster %v, found %+v, lookups %v; want neither", r.Cluster, r.Found, r.Lookups)
	}
}

// Lookups reach the contents printable, deduplicated, sorted and
// bounded, from the renderer or any other.
func TestLookupsAreCleanedAndBounded(t *testing.T) {
	var ls []facts.Lookup
	for i := range claims.MaxLookups + 20 {
		ls = append(ls, facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: strings.Repeat("x", i%3) + string(rune('a'+i%26)) + strings.Repeat("y", i)})
	}
	ls = append(ls, ls[0], facts.Lookup{APIVersion: "v1\x1b[31m", Kind: "Secret", Name: strings.Repeat("n", 10000)})
	got, dropped := claims.CleanLookups(ls)
	if len(got) != claims.MaxLookups || dropped != 21 {
		t.Fatalf("%d lookups, %d dropped; want %d and 21", len(got), dropped, claims.MaxLookups)
	}
	if !slices.IsSortedFunc(got, func(a, b facts.Lookup) int {
		return strings.Compare(a.APIVersion+"\x00"+a.Kind+"\x00"+a.Namespace+"\x00"+a.Name, b.APIVersion+"\x00"+b.Kind+"\x00"+b.Namespace+"\x00"+b.Name)
	}) {
		t.Error("lookups not sorted")
	}
	for _, l := range got {
		for _, s := range []string{l.APIVersion, l.Kind, l.Namespace, l.Name} {
			if facts.Printable(s) != s || len(s) > claims.MaxLookupText+len("…") {
				t.Errorf("lookup string %q: not printable or longer than %d bytes", s, claims.MaxLookupText)
			}
		}
	}
}
