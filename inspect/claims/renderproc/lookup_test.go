package renderproc_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// A chart's lookups and its second render cross the wire as they are
// made in process.
func TestAChartsLookupsAndSecondRenderCrossTheWire(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	req := chartOf(t, `{{- if not (lookup "rbac.authorization.k8s.io/v1" "ClusterRole" "" "shared-reader") }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: shared-reader}
{{- end }}
{{- $s := lookup "v1" "Secret" .Release.Namespace "x" }}{{- $s = lookup "v1" "Secret" .Release.Namespace "x" }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
`)
	got, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want, err := chartrender.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the renderer process answered\n%+v\nin process:\n%+v", got, want)
	}
	wantLookups := []facts.Lookup{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "shared-reader"}, {APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "x"}}
	if !got.Cluster || !reflect.DeepEqual(got.Lookups, wantLookups) {
		t.Errorf("cluster %v, lookups %v; want %v", got.Cluster, got.Lookups, wantLookups)
	}
	if got.Found == nil || strings.Contains(string(got.Found.Files["templates/t.yaml"]), "ClusterRole") || !strings.Contains(string(got.Files["templates/t.yaml"]), "ClusterRole") {
		t.Errorf("first render %q, second %+v; want the ClusterRole in the first alone", got.Files, got.Found)
	}
	if n := len(children(t)); n != 1 {
		t.Fatalf("%d renderer processes; want the one kept", n)
	}
}

// A second render past what is left of the renderer's time is stopped
// in the renderer, which answers the first and serves no more.
func TestASecondRenderPastItsTimeIsStoppedAndRetiresTheRenderer(t *testing.T) {
	r := renderproc.New(renderer)
	r.Timeout = claims.RenderTimeout + 20*time.Second
	defer r.Close()
	start := time.Now()
	got, err := r.Render(context.Background(), chartOf(t, "{{ if lookup \"v1\" \"Secret\" \"demo\" \"x\" }}{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}{{ end }}\nkind: ConfigMap\n"))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > claims.RenderTimeout {
		t.Errorf("answered after %s; want within %s", took, claims.RenderTimeout)
	}
	if got.Found == nil || !strings.Contains(got.Found.Stopped, "took longer than") || got.Found.Failed != "" || len(got.Files) != 1 {
		t.Fatalf("first render %q, second %+v; want the first, and the second stopped", got.Files, got.Found)
	}
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("the process that abandoned a render is kept: %v", pids)
	}
}
