package claims_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarf-dev/zarf/src/api/v1alpha1"

	"github.com/colonel-byte/zarf-planner/inspect/claims"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/planner/facts"
)

// beside is the real renderer, installed beside the test binary the
// first time a test asks for it (unless a TestMain installed it).
func beside(t *testing.T) *renderproc.Runner {
	t.Helper()
	if err := install(); err != nil {
		t.Fatal(err)
	}
	r := renderproc.Beside()
	t.Cleanup(func() { r.Close() })
	return r
}

var install = sync.OnceValue(func() error {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(exe), renderproc.Binary)); err == nil {
		return nil
	}
	return rendertest.Install()
})

// counting counts the renders asked of the real renderer.
type counting struct {
	next claims.Renderer
	n    atomic.Int64
}

func (c *counting) Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	c.n.Add(1)
	return c.next.Render(ctx, req)
}

// listed is a package whose component app lists chart demo 1.0.0 n
// times, each as release demo in namespace demo.
func listed(n int) v1alpha1.ZarfPackage {
	comp := v1alpha1.ZarfComponent{Name: "app"}
	for range n {
		comp.Charts = append(comp.Charts, v1alpha1.ZarfChart{Name: "demo", Version: "1.0.0", Namespace: "demo", ValuesFiles: []string{"values.yaml"}})
	}
	return v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{comp}}
}

const claimingChart = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\nspec: {group: example.com, scope: Cluster, names: {kind: Gadget}}\n" +
	"---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: {{ .Values.role }}}\nrules: [{apiGroups: [\"\"], resources: [pods], verbs: [get]}]\n" +
	"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"

func TestAChartListedSixTimesRendersOnce(t *testing.T) {
	runner := beside(t)
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{
		"charts/demo-1.0.0.tgz": rendertest.Chart(t, map[string]string{"templates/all.yaml": claimingChart}),
		"values/demo-1.0.0-0":   []byte("role: reader\n"),
	}}}
	collect := func(n int) (facts.Contents, int64) {
		r := &counting{next: runner}
		c, err := claims.Collect(context.Background(), listed(n), comps, r)
		if err != nil {
			t.Fatal(err)
		}
		return c, r.n.Load()
	}
	once, n1 := collect(1)
	six, n6 := collect(6)
	if n1 != 1 || n6 != 1 {
		t.Fatalf("listed once: %d renders; six times: %d renders; want one each", n1, n6)
	}
	if len(once.Claims.CRDs) != 1 || len(once.Claims.ClusterScoped) != 1 || once.Claims.ClusterScoped[0].Name != "reader" {
		t.Fatalf("listed once, the chart claims %+v", once.Claims)
	}
	// Six listings claim what one does, six times over.
	for what, pair := range map[string][2]any{
		"CRDs":           {once.Claims.CRDs, six.Claims.CRDs},
		"cluster-scoped": {once.Claims.ClusterScoped, six.Claims.ClusterScoped},
		"unknown":        {once.Claims.Unknown, six.Claims.Unknown},
	} {
		one, all := reflect.ValueOf(pair[0]), reflect.ValueOf(pair[1])
		if all.Len() != 6*one.Len() {
			t.Fatalf("%s: %d listed six times, %d once", what, all.Len(), one.Len())
		}
		for i := range all.Len() {
			if !reflect.DeepEqual(all.Index(i).Interface(), one.Index(i/6).Interface()) {
				t.Fatalf("%s %d: %+v, listed once %+v", what, i, all.Index(i), one.Index(i/6))
			}
		}
	}
	for _, ch := range six.Components[0].Charts {
		if !ch.Rendered {
			t.Fatalf("a listing was not rendered: %+v", ch)
		}
	}
	// Another values file is another render.
	comps["app"].Files["values/demo-1.0.0-0"] = []byte("role: writer\n")
	other, n := collect(6)
	if n != 1 || other.Claims.ClusterScoped[0].Name != "writer" {
		t.Fatalf("other values: %d renders, claims %+v", n, other.Claims.ClusterScoped)
	}
}

func TestAChartsOwnFaultIsRememberedARenderersFailureIsNot(t *testing.T) {
	runner := beside(t)
	comps := map[string]*claims.Component{"app": {Files: map[string][]byte{
		"charts/demo-1.0.0.tgz": rendertest.Chart(t, map[string]string{"templates/bad.yaml": "{{ fail \"no\" }}"}),
		"values/demo-1.0.0-0":   []byte("a: 1\n"),
	}}}
	r := &counting{next: runner}
	c, err := claims.Collect(context.Background(), listed(3), comps, r)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.n.Load(); n != 1 {
		t.Fatalf("a chart that fails, listed three times, rendered %d times", n)
	}
	if got := unknownKinds(c); len(got) != 3 || !strings.Contains(got[2], "it could not be rendered: rendering: ") {
		t.Fatalf("unknown claims %q", got)
	}

	// A renderer that cannot start is asked again each time.
	missing := &counting{next: renderproc.New(t.TempDir() + "/" + renderproc.Binary)}
	memo := claims.NewMemo(missing, 0)
	req := claims.ChartRequest{Chart: comps["app"].Files["charts/demo-1.0.0.tgz"], Release: "demo", Namespace: "demo"}
	for range 2 {
		var bad *claims.ChartError
		if _, err := memo.Render(context.Background(), req); err == nil || errors.As(err, &bad) {
			t.Fatalf("a renderer that is not installed: %v", err)
		}
	}
	if n := missing.n.Load(); n != 2 {
		t.Fatalf("a failing renderer was asked %d times for two renders, want 2", n)
	}
}

func TestTheMemoForgetsTheLeastRecentlyUsedPastItsBound(t *testing.T) {
	runner := beside(t)
	r := &counting{next: runner}
	// Each renders to about 40 KiB: a bound of 100 KiB keeps two.
	memo := claims.NewMemo(r, 100<<10)
	req := func(i int) claims.ChartRequest {
		return claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/cm.yaml": fmt.Sprintf("kind: ConfigMap\ndata: {a: %q}\nmetadata: {name: c%d}\n", strings.Repeat("x", 40<<10), i)}), Release: "demo", Namespace: "demo"}
	}
	for _, i := range []int{0, 1, 0, 2, 0, 1} {
		if _, err := memo.Render(context.Background(), req(i)); err != nil {
			t.Fatal(err)
		}
	}
	// 0, 1 render; 0 is remembered; 2 renders and evicts 1 (0 was used
	// since); 0 is remembered; 1 renders again.
	if n := r.n.Load(); n != 4 {
		t.Fatalf("%d renders, want 4", n)
	}
}

func TestAnArchivesChartsShareOneBudget(t *testing.T) {
	defer claims.SetArchiveRenderBudget(3 * time.Second)()
	runner := beside(t)
	runner.Timeout = 2 * time.Second
	comp := v1alpha1.ZarfComponent{Name: "app"}
	files := map[string][]byte{}
	// Four runaway charts, each of its own: the first times out (2 s),
	// the second is cut by the budget (3 s), the others are not tried.
	for i := range 4 {
		name := fmt.Sprintf("slow%d", i)
		comp.Charts = append(comp.Charts, v1alpha1.ZarfChart{Name: name, Version: "1.0.0", Namespace: "demo"})
		files["charts/"+name+"-1.0.0.tgz"] = rendertest.Chart(t, map[string]string{"templates/t.yaml": fmt.Sprintf("# %d\n{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}", i)})
	}
	r := &counting{next: runner}
	c, err := claims.Collect(context.Background(), v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{comp}}, map[string]*claims.Component{"app": {Files: files}}, r)
	if err != nil {
		t.Fatalf("an archive over its budget failed the read: %v", err)
	}
	timedOut, overBudget := 0, 0
	for _, u := range c.Claims.Unknown {
		switch {
		case strings.Contains(u.Reason, "took longer than 2s"):
			timedOut++
		case strings.Contains(u.Reason, "took longer than the 3s they may take together (claims.ArchiveRenderBudget)"):
			overBudget++
		}
	}
	// (On a machine slow enough to start a renderer in more than 3 s the
	// first is cut by the budget too: the counts allow it.)
	if timedOut > 1 || timedOut+overBudget != 4 {
		t.Fatalf("%d timed out, %d over the budget: %q", timedOut, overBudget, unknownKinds(c))
	}
	if n := r.n.Load(); n > 2 {
		t.Fatalf("%d renders asked, want at most the two begun within the budget", n)
	}
}

// cancelling cancels its context once the renderer has answered n times.
type cancelling struct {
	next   claims.Renderer
	n      int
	cancel context.CancelFunc
}

func (c *cancelling) Render(ctx context.Context, req claims.ChartRequest) (claims.Rendered, error) {
	r, err := c.next.Render(ctx, req)
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return r, err
}

// What a cancelled read rendered is remembered for the next read.
func TestACancelledReadKeepsWhatItRendered(t *testing.T) {
	runner := beside(t)
	r := &counting{next: runner}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	memo := claims.NewMemo(&cancelling{next: r, n: 1, cancel: cancel}, 0)
	comp := v1alpha1.ZarfComponent{Name: "app"}
	files := map[string][]byte{}
	for i := range 2 {
		name := fmt.Sprintf("c%d", i)
		comp.Charts = append(comp.Charts, v1alpha1.ZarfChart{Name: name, Version: "1.0.0", Namespace: "demo"})
		files["charts/"+name+"-1.0.0.tgz"] = rendertest.Chart(t, map[string]string{"templates/cm.yaml": fmt.Sprintf("kind: ConfigMap\nmetadata: {name: c%d}\n", i)})
	}
	pkg := v1alpha1.ZarfPackage{Components: []v1alpha1.ZarfComponent{comp}}
	comps := map[string]*claims.Component{"app": {Files: files}}
	if _, err := claims.Collect(ctx, pkg, comps, memo); !errors.Is(err, context.Canceled) {
		t.Fatalf("a read cancelled after its first chart: %v", err)
	}
	if n := r.n.Load(); n != 1 {
		t.Fatalf("%d renders before the cancel, want 1", n)
	}
	c, err := claims.Collect(context.Background(), pkg, comps, memo)
	if err != nil {
		t.Fatal(err)
	}
	if n := r.n.Load(); n != 2 {
		t.Fatalf("%d renders after the second read, want 2: the first chart again, or the second not at all", n)
	}
	for _, ch := range c.Components[0].Charts {
		if !ch.Rendered {
			t.Fatalf("not rendered: %+v", ch)
		}
	}
}

// Callers asking at once for a chart being rendered wait for its render.
func TestCallersAtOnceShareOneRender(t *testing.T) {
	runner := beside(t)
	r := &counting{next: runner}
	memo := claims.NewMemo(r, 0)
	req := claims.ChartRequest{Chart: rendertest.Chart(t, map[string]string{"templates/cm.yaml": "{{ range until 2000 }}{{ end }}kind: ConfigMap\nmetadata: {name: c}\n"}), Release: "demo", Namespace: "demo"}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			got, err := memo.Render(context.Background(), req)
			if err == nil && len(got.Files) != 1 {
				err = fmt.Errorf("rendered %v", got.Files)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := r.n.Load(); n != 1 {
		t.Fatalf("eight callers at once: %d renders, want 1", n)
	}
}

// A render larger than MemoBytes is not remembered: a chart rendering
// near MaxRendered renders again when it is asked again, so a daemon
// never holds such a render beside the output it reads. Before, the
// memo's 32 MiB kept two of them.
func TestTheMemoDoesNotKeepARenderNearMaxRendered(t *testing.T) {
	big := claims.RenderFunc(func(context.Context, claims.ChartRequest) (claims.Rendered, error) {
		return claims.Rendered{Files: map[string][]byte{"templates/t.yaml": make([]byte, claims.MaxRendered*9/10)}}, nil
	})
	r := &counting{next: big}
	memo := claims.NewMemo(r, 0)
	req := claims.ChartRequest{Chart: []byte("chart"), Release: "demo", Namespace: "demo"}
	for range 2 {
		if _, err := memo.Render(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.n.Load(); n != 2 {
		t.Fatalf("a render of %d bytes was asked %d times for two requests; want 2 (not remembered)", claims.MaxRendered*9/10, n)
	}
	// A small one is remembered.
	small := &counting{next: claims.RenderFunc(func(context.Context, claims.ChartRequest) (claims.Rendered, error) {
		return claims.Rendered{Files: map[string][]byte{"templates/t.yaml": make([]byte, 100<<10)}}, nil
	})}
	memo = claims.NewMemo(small, 0)
	for range 2 {
		if _, err := memo.Render(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if n := small.n.Load(); n != 1 {
		t.Fatalf("a render of 100 KiB was asked %d times for two requests; want 1 (remembered)", n)
	}
}
