package claims_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/chartrender"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// askedChart collects a package of one chart (sharedRole: a ClusterRole
// made and bound only when the cluster has none) rendered with its
// lookups answered by asking, from cluster prod.
func askedChart(t *testing.T, asking claims.Asking) facts.Contents {
	t.Helper()
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{{Name: "app", Charts: []v1alpha1.ZarfChart{{Name: "demo", Version: "1.0.0", Namespace: "demo"}}}}}
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{"charts/demo-1.0.0.tgz": rendertest.Chart(t, sharedRole)}}}
	memo := claims.NewMemo(claims.RenderFunc(chartrender.Render), 0)
	c, err := claims.Collect(context.Background(), pkg, comps, claims.Ask(memo, asking, "prod"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if memo.Renders() != 0 {
		t.Errorf("the memo rendered %d asked charts; want it to pass them by", memo.Renders())
	}
	return c
}

// A chart rendered with its lookups asked of a cluster claims what the
// cluster's answers make it claim, with no unknown for its lookups: the
// chart says which cluster answered, and lists its lookups with their
// answers.
func TestAChartAskedOfAClusterClaimsWhatItsAnswersMake(t *testing.T) {
	role := facts.Lookup{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "shared-reader"}
	absent := askedChart(t, claims.AskingFunc(func(context.Context, facts.Lookup) (map[string]any, error) { return map[string]any{}, nil }))
	ch := absent.Components[0].Charts[0]
	want := role
	want.Answer = "absent"
	if ch.RenderedAgainst != "prod" || !reflect.DeepEqual(ch.Lookups, []facts.Lookup{want}) {
		t.Errorf("chart rendered against %q, lookups %+v; want prod and %+v", ch.RenderedAgainst, ch.Lookups, want)
	}
	if len(absent.Claims.Unknown) != 0 {
		t.Errorf("unknowns %+v; want none", absent.Claims.Unknown)
	}
	if len(absent.Claims.ClusterRBAC) != 1 || absent.Claims.ClusterRBAC[0].Role != "shared-reader" {
		t.Errorf("cluster RBAC %+v; want the binding of shared-reader, made when the cluster has none", absent.Claims.ClusterRBAC)
	}
	if !strings.Contains(strings.Join(ch.Notes, "\n"), "rendered with the cluster's answers") {
		t.Errorf("notes %q", ch.Notes)
	}

	exists := askedChart(t, claims.AskingFunc(func(_ context.Context, l facts.Lookup) (map[string]any, error) {
		return map[string]any{"apiVersion": l.APIVersion, "kind": l.Kind, "metadata": map[string]any{"name": l.Name}}, nil
	}))
	ch = exists.Components[0].Charts[0]
	if len(ch.Lookups) != 1 || ch.Lookups[0].Answer != "exists" || len(exists.Claims.ClusterRBAC) != 0 || len(exists.Claims.ClusterScoped) != 0 || len(exists.Claims.Unknown) != 0 {
		t.Errorf("with the role in the cluster: lookups %+v, RBAC %+v, cluster-scoped %+v, unknowns %+v; want no claim of it", ch.Lookups, exists.Claims.ClusterRBAC, exists.Claims.ClusterScoped, exists.Claims.Unknown)
	}

	refused := askedChart(t, claims.AskingFunc(func(context.Context, facts.Lookup) (map[string]any, error) {
		return nil, claims.ChartErrorf("cluster prod does not serve API version rbac.authorization.k8s.io/v1")
	}))
	// Helm's refusal fails the render: the chart is not rendered, and
	// lists what it asked, with the refusal.
	ch = refused.Components[0].Charts[0]
	if ch.Rendered || len(refused.Claims.Unknown) != 1 || !strings.Contains(refused.Claims.Unknown[0].Reason, "does not serve API version") {
		t.Errorf("a refused lookup: chart %+v, unknowns %+v", ch, refused.Claims.Unknown)
	}
	if ch.RenderedAgainst != "prod" || len(ch.Lookups) != 1 || ch.Lookups[0].Answer != "error: cluster prod does not serve API version rbac.authorization.k8s.io/v1" {
		t.Errorf("a refused lookup: chart against %q, lookups %+v; want prod and the refusal", ch.RenderedAgainst, ch.Lookups)
	}
}

// Summaries of answers, as a chart's lookups list them.
func TestAnswerSummary(t *testing.T) {
	for _, tt := range []struct {
		m    map[string]any
		err  error
		want string
	}{
		{map[string]any{}, nil, "absent"},
		{nil, nil, "absent"},
		{map[string]any{"kind": "Secret"}, nil, "exists"},
		{map[string]any{"items": []any{}}, nil, "0 objects"},
		{map[string]any{"items": []any{map[string]any{}}}, nil, "1 object"},
		{map[string]any{"items": []any{map[string]any{}, map[string]any{}, map[string]any{}}}, nil, "3 objects"},
		{nil, claims.ChartErrorf("no\nmore"), "error: no"},
	} {
		if got := claims.AnswerSummary(tt.m, tt.err); got != tt.want {
			t.Errorf("AnswerSummary(%v, %v) = %q; want %q", tt.m, tt.err, got, tt.want)
		}
	}
}
