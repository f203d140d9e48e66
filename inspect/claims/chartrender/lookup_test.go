package chartrender_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// Found answers as Helm's lookup answers for a cluster holding the
// least object there can be: the object itself for a name, a list of
// one for none.
func TestFoundAnswersTheLeastObject(t *testing.T) {
	ctx := context.Background()
	got, err := chartrender.Found.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "tls"})
	empty := func() map[string]any { return map[string]any{} }
	want := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "tls", "namespace": "demo", "labels": empty(), "annotations": empty()},
		"data": empty(), "spec": empty(), "status": empty()}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("an object: %v, %v; want %v", got, err, want)
	}
	got, err = chartrender.Found.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "Namespace"})
	want = map[string]any{"apiVersion": "v1", "kind": "NamespaceList", "metadata": map[string]any{},
		"items": []any{map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": chartrender.FoundName, "labels": empty(), "annotations": empty()},
			"data": empty(), "spec": empty(), "status": empty()}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("a list: %v, %v; want %v", got, err, want)
	}
	if got, err := chartrender.Absent.Lookup(ctx, facts.Lookup{APIVersion: "v1", Kind: "Namespace"}); err != nil || len(got) != 0 {
		t.Errorf("absent: %v, %v; want an empty map", got, err)
	}
}

// The lookups a chart makes are reported printable, once each, sorted
// and bounded, with a note when there were more.
func TestTheLookupsOfAChartAreRecordedBounded(t *testing.T) {
	tpl := fmt.Sprintf(`{{- range $i := until %d }}{{ $_ := lookup "v1" "ConfigMap" "demo" (printf "cm-%%03d" $i) }}{{ end }}`, claims.MaxLookups+50) +
		`{{- $_ := lookup "v1" "Secret" "demo" "z-tls" }}{{- $_ = lookup "v1" "Secret" "demo" "z-tls" }}{{- $_ = lookup "v1" "Secret" "d\x1bemo" "a" }}` + "\nkind: ConfigMap\n"
	r, err := chartrender.Render(context.Background(), claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/t.yaml": tpl}), Release: "demo", Namespace: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Lookups) != claims.MaxLookups {
		t.Fatalf("%d lookups; want %d", len(r.Lookups), claims.MaxLookups)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, fmt.Sprintf("more than %d objects", claims.MaxLookups))
	}) {
		t.Errorf("notes %q; want one saying it looks up more", r.Notes)
	}
	if cleaned, _ := claims.CleanLookups(r.Lookups); !reflect.DeepEqual(cleaned, r.Lookups) {
		t.Errorf("lookups not cleaned and sorted: %v", r.Lookups)
	}
	if r.Found == nil || r.Found.Failed != "" || r.Found.Stopped != "" {
		t.Errorf("second render %+v; want it rendered", r.Found)
	}

	// Fewer than the bound: every one, once, printable.
	tpl = `{{- $_ := lookup "v1" "Secret" "demo" "z-tls" }}{{- $_ = lookup "v1" "Secret" "demo" "z-tls" }}{{- $_ = lookup "v1" "Secret" "d` + "\x1b" + `emo" "a" }}` + "\nkind: ConfigMap\n"
	r, err = chartrender.Render(context.Background(), claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/t.yaml": tpl}), Release: "demo", Namespace: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	want := []facts.Lookup{{APIVersion: "v1", Kind: "Secret", Namespace: facts.Printable("d\x1bemo"), Name: "a"}, {APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "z-tls"}}
	if !reflect.DeepEqual(r.Lookups, want) {
		t.Errorf("lookups %q; want %q", r.Lookups, want)
	}
	if facts.Printable("d\x1bemo") == "d\x1bemo" {
		t.Fatal("the test's escape is printable")
	}
}

// Both renders together render to MaxRendered at most: a second render
// that would take them past it, or that alone renders past it, is
// stopped, and the first kept.
func TestASecondRenderOverTheBoundIsStopped(t *testing.T) {
	const nine = `{{ range until 90 }}{{ repeat 100000 "#" }}{{ end }}` // 9 MB
	for name, tpl := range map[string]string{
		"together": `{{ $_ := lookup "v1" "Secret" "demo" "x" }}# ` + nine + "\nkind: ConfigMap\n",
		"alone":    `{{ if lookup "v1" "Secret" "demo" "x" }}# ` + nine + "\n{{ end }}# " + nine + "\nkind: ConfigMap\n",
	} {
		t.Run(name, func(t *testing.T) {
			r, err := chartrender.Render(context.Background(), claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/t.yaml": tpl}), Release: "demo", Namespace: "demo"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Found == nil {
				t.Fatal("no second render")
			}
			if !strings.Contains(r.Found.Stopped, "more than") || r.Found.Files != nil || len(r.Files) != 1 {
				t.Fatalf("second render stopped %q, failed %q, %d files; first render %d files; want it stopped over the bound, the first kept", r.Found.Stopped, r.Found.Failed, len(r.Found.Files), len(r.Files))
			}
		})
	}
}
