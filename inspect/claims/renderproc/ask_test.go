package renderproc_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/buildinfo"
	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// recording is an Asking that answers from objects (by lookup) and
// records every lookup it is asked.
type recording struct {
	mu      sync.Mutex
	objects map[facts.Lookup]map[string]any
	asked   []facts.Lookup
}

func (a *recording) Lookup(_ context.Context, l facts.Lookup) (map[string]any, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, l)
	if m, ok := a.objects[l]; ok {
		return m, nil
	}
	return map[string]any{}, nil
}

func (a *recording) calls() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

// An asked chart's lookups are questions to its caller, each asked
// once however often the templates call it, answered by the request's
// Asking; the chart renders once with those answers, and each lookup
// says what it was answered.
func TestAnAskedChartsLookupsAreAnsweredByItsCaller(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	secret := facts.Lookup{APIVersion: "v1", Kind: "Secret", Namespace: "demo", Name: "tls"}
	absent := facts.Lookup{APIVersion: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "none"}
	list := facts.Lookup{APIVersion: "v1", Kind: "ConfigMap", Namespace: "demo"}
	asking := &recording{objects: map[facts.Lookup]map[string]any{
		secret: {"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "tls", "namespace": "demo", "labels": map[string]any{"app": "web"}}},
		list: {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": map[string]any{}, "items": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}},
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b"}},
		}},
	}}
	req := chartOf(t, `{{- $s := lookup "v1" "Secret" .Release.Namespace "tls" }}{{- $again := lookup "v1" "Secret" .Release.Namespace "tls" }}
{{- $_ := set $again "changed" "by the template" }}{{- $third := lookup "v1" "Secret" .Release.Namespace "tls" }}
{{- if and $s (not (hasKey $third "changed")) }}
apiVersion: v1
kind: ConfigMap
metadata: {name: found-{{ $s.metadata.labels.app }}}
{{- end }}
{{- if not (lookup "v1" "ConfigMap" "demo" "none") }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: made-when-absent}
{{- end }}
{{- $l := lookup "v1" "ConfigMap" "demo" "" }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: count-{{ len $l.items }}}
`)
	req.Asking = asking
	got, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	body := string(got.Files["templates/t.yaml"])
	for _, want := range []string{"name: found-web", "name: made-when-absent", "name: count-2"} {
		if !strings.Contains(body, want) {
			t.Errorf("rendered %q; want %q", body, want)
		}
	}
	if !got.Asked || !got.Cluster || got.Found != nil {
		t.Errorf("asked %v, cluster %v, second render %+v; want one render, asked", got.Asked, got.Cluster, got.Found)
	}
	wantLookups := []facts.Lookup{list, absent, secret}
	wantLookups[0].Answer, wantLookups[1].Answer, wantLookups[2].Answer = "2 objects", "absent", "exists"
	if !reflect.DeepEqual(got.Lookups, wantLookups) {
		t.Errorf("lookups %+v; want %+v", got.Lookups, wantLookups)
	}
	if n := asking.calls(); n != 3 {
		t.Errorf("the caller was asked %d times (%v); want each of the 3 lookups once", n, asking.asked)
	}
	if !strings.Contains(strings.Join(got.Notes, "\n"), "rendered with the cluster's answers") {
		t.Errorf("notes %q do not say the cluster answered", got.Notes)
	}
	// The child serves on: the next request, not asked, renders twice
	// without a cluster, as before.
	plain := chartOf(t, `{{ if lookup "v1" "Secret" "demo" "x" }}{{ end }}kind: ConfigMap`)
	again, err := r.Render(context.Background(), plain)
	if err != nil || again.Asked || again.Found == nil || again.Lookups[0].Answer != "" {
		t.Fatalf("an unasked chart after an asked one: %+v, %v", again, err)
	}
	if n := len(children(t)); n != 1 {
		t.Fatalf("%d renderer processes; want the one kept", n)
	}
}

// A render asks at most MaxLookupQuestions lookups: the one past them
// fails the render, the chart's fault, naming the bound.
func TestAnAskedRenderAsksAtMostItsBound(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	asking := &recording{}
	req := chartOf(t, fmt.Sprintf(`{{ range until %d }}{{ $x := lookup "v1" "Secret" "demo" (printf "s%%d" .) }}{{ end }}kind: ConfigMap`, renderproc.MaxLookupQuestions+1))
	req.Asking = asking
	_, err := r.Render(context.Background(), req)
	var bad *claims.ChartError
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, fmt.Sprintf("more than %d objects in the cluster", renderproc.MaxLookupQuestions)) {
		t.Fatalf("%d lookups gave %v", renderproc.MaxLookupQuestions+1, err)
	}
	if n := asking.calls(); n != renderproc.MaxLookupQuestions {
		t.Errorf("the caller was asked %d lookups; want %d", n, renderproc.MaxLookupQuestions)
	}
	// Exactly the bound renders.
	req = chartOf(t, fmt.Sprintf(`{{ range until %d }}{{ $x := lookup "v1" "Secret" "demo" (printf "s%%d" .) }}{{ end }}kind: ConfigMap`, renderproc.MaxLookupQuestions))
	req.Asking = &recording{}
	got, err := r.Render(context.Background(), req)
	if err != nil || len(got.Lookups) != renderproc.MaxLookupQuestions || got.Lookups[0].Answer != "absent" {
		t.Fatalf("%d lookups: %d listed, %v", renderproc.MaxLookupQuestions, len(got.Lookups), err)
	}
}

// An answer slower than the caller's bound abandons the render as the
// caller's failure (the cluster's), not the chart's, and ends the
// renderer that waited for it.
func TestASlowAnswerIsTheCallersFailure(t *testing.T) {
	r := renderproc.New(renderer)
	r.AskTimeout = 300 * time.Millisecond
	defer r.Close()
	req := chartOf(t, `{{ if lookup "v1" "Secret" "demo" "slow" }}{{ end }}kind: ConfigMap`)
	req.Asking = claims.AskingFunc(func(ctx context.Context, l facts.Lookup) (map[string]any, error) {
		time.Sleep(3 * time.Second) // heeds no context
		return map[string]any{}, nil
	})
	start := time.Now()
	_, err := r.Render(context.Background(), req)
	var bad *claims.ChartError
	var asked *claims.AskError
	if err == nil || errors.As(err, &bad) || !errors.As(err, &asked) || !strings.Contains(err.Error(), "no answer within 300ms") || asked.Lookup.Name != "slow" {
		t.Fatalf("a slow answer gave %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("gave up after %s; want about %s", took, r.AskTimeout)
	}
	if pids := children(t); len(pids) != 0 {
		t.Fatalf("the renderer left waiting for an answer is kept: %v", pids)
	}
}

// An answer larger than MaxLookupAnswer is not sent: the lookup fails,
// and so does the render, naming the bound.
func TestAHugeAnswerFailsTheRender(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	req := chartOf(t, `{{ if lookup "v1" "Secret" "demo" "huge" }}{{ end }}kind: ConfigMap`)
	req.Asking = claims.AskingFunc(func(context.Context, facts.Lookup) (map[string]any, error) {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "huge", "annotations": map[string]any{"a": strings.Repeat("x", renderproc.MaxLookupAnswer)}}}, nil
	})
	_, err := r.Render(context.Background(), req)
	var bad *claims.ChartError
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, fmt.Sprintf("more than the %d the renderer takes", renderproc.MaxLookupAnswer)) || !strings.Contains(bad.Reason, "v1/Secret demo/huge") {
		t.Fatalf("a huge answer gave %v", err)
	}
	if len(bad.Lookups) != 1 || !strings.HasPrefix(bad.Lookups[0].Answer, "error: the cluster's answer to its lookup of v1/Secret demo/huge is ") {
		t.Errorf("the failed render's lookups %+v; want the huge one, refused", bad.Lookups)
	}
	// The renderer is healthy: it answered.
	if n := len(children(t)); n != 1 {
		t.Fatalf("%d renderer processes; want the one kept", n)
	}
}

// An Asking that cannot ask is the caller's failure; one that refuses
// as Helm's lookup refuses (a *claims.ChartError) fails the render,
// the chart's fault.
func TestAnAskingThatErrs(t *testing.T) {
	r := renderproc.New(renderer)
	defer r.Close()
	req := chartOf(t, `{{ if lookup "example.com/v9" "Gadget" "demo" "g" }}{{ end }}kind: ConfigMap`)
	req.Asking = claims.AskingFunc(func(context.Context, facts.Lookup) (map[string]any, error) {
		return nil, errors.New("connection refused")
	})
	_, err := r.Render(context.Background(), req)
	var bad *claims.ChartError
	var asked *claims.AskError
	if err == nil || errors.As(err, &bad) || !errors.As(err, &asked) || !strings.Contains(err.Error(), "example.com/v9/Gadget demo/g: connection refused") {
		t.Fatalf("an Asking that cannot ask gave %v", err)
	}
	req.Asking = claims.AskingFunc(func(context.Context, facts.Lookup) (map[string]any, error) {
		return nil, claims.ChartErrorf("the cluster does not serve API version example.com/v9")
	})
	_, err = r.Render(context.Background(), req)
	if !errors.As(err, &bad) || !strings.Contains(bad.Reason, "does not serve API version example.com/v9") {
		t.Fatalf("an Asking that refuses gave %v", err)
	}
}

// A renderer that asks what it was not to ask, or garbles its
// question, is the renderer's failure, not the chart's.
func TestARendererThatAsksOutOfTurnFails(t *testing.T) {
	frame := func(s string) string { return fmt.Sprintf(`\000\000\000\%03o%s`, len(s), s) }
	hello := frame(fmt.Sprintf(`{"hello":%d,"build":"%s"}`, renderproc.Protocol, buildinfo.ID))
	for name, c := range map[string]struct {
		asking claims.Asking
		then   string
		want   string
	}{
		"unasked":  {nil, frame(`{"lookup":{"api_version":"v1","kind":"Secret","name":"x"}}`), "it asked a lookup of a chart whose lookups it was to answer itself"},
		"garbled":  {&recording{}, frame(`{"lookup":{"api_version":"v1","kind":"Secret","nome":"x"}}`), "no such key"},
		"twice":    {&recording{}, frame(`{"lookup":{"api_version":"v1","kind":"Secret","name":"x"}}`) + frame(`{"lookup":{"api_version":"v1","kind":"Secret","name":"x"}}`), "twice"},
		"unclean":  {&recording{}, frame(`{"lookup":{"api_version":"v1","kind":"Sec\u001bret","name":"x"}}`), "not printable"},
		"unmarked": {&recording{}, frame(`{"rendered":{"files":{}}}`), "asked (false)"},
	} {
		script := "#!/bin/sh\nprintf '" + hello + "'\nsleep 0.3\nprintf '" + frame(`{"ack":true}`) + c.then + "'\nsleep 2\n"
		req := chartOf(t, "kind: ConfigMap\n")
		req.Asking = c.asking
		_, err := renderproc.New(fake(t, script)).Render(context.Background(), req)
		var bad *claims.ChartError
		if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want the renderer's failure saying %q", name, err, c.want)
		}
	}
}
