package inspect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// catalogFixture reads one archive of testdata/bundles/catalog (built by
// the real zarf CLI from testdata/sources/catalog).
func catalogFixture(t *testing.T, file string) *facts.Contents {
	t.Helper()
	a, err := Inspect(context.Background(), "../testdata/bundles/catalog/"+file, Limits{})
	if err != nil {
		t.Fatalf("inspecting %s: %v", file, err)
	}
	if a.Candidate.Contents == nil {
		t.Fatalf("%s: no contents", file)
	}
	if err := a.Candidate.Contents.Validate(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return a.Candidate.Contents
}

func crdNames(c *facts.Contents) []string {
	var out []string
	for _, x := range c.Claims.CRDs {
		out = append(out, x.Name+" from "+x.Origin.File)
	}
	return out
}

func TestContentsOfALocalChartWithCRDsAndClusterRBAC(t *testing.T) {
	c := catalogFixture(t, "zarf-package-gadgets-amd64-2.1.0.tar.zst")
	if got, want := crdNames(c), []string{"gadgets.charts.example.com from charts/gadgets-0.3.0.tgz: crds/gadgets.yaml"}; !slices.Equal(got, want) {
		t.Errorf("crds: got %v; want %v", got, want)
	}
	var kinds []string
	for _, o := range c.Claims.ClusterScoped {
		kinds = append(kinds, o.Kind+"/"+o.Name)
	}
	// The PriorityClass exists only with the package's values file
	// (values/production.yaml), not with the chart's defaults.
	if want := []string{"PriorityClass/gadgets-critical", "ClusterRole/gadgets-controller", "ClusterRoleBinding/gadgets-controller"}; !slices.Equal(kinds, want) {
		t.Errorf("cluster-scoped: got %v; want %v", kinds, want)
	}
	if len(c.Claims.ClusterRBAC) != 1 {
		t.Fatalf("cluster rbac: got %d claims; want 1", len(c.Claims.ClusterRBAC))
	}
	r := c.Claims.ClusterRBAC[0]
	if !r.Wildcard || r.Role != "gadgets-controller" || r.RoleOrigin == nil || len(r.Rules) != 3 || !slices.Equal(r.Subjects, []string{"ServiceAccount gadgets/gadgets-controller"}) {
		t.Errorf("cluster rbac: got %+v; want the wildcard role the production values turn on, bound to the controller", r)
	}
	var regs []string
	for _, x := range c.Claims.Registries {
		regs = append(regs, x.Registry)
	}
	if want := []string{"127.0.0.1:47301", "127.0.0.1:47302"}; !slices.Equal(regs, want) {
		t.Errorf("registries: got %v; want %v", regs, want)
	}
	var ns []string
	for _, n := range c.Claims.Namespaces {
		ns = append(ns, n.Name)
		if n.Created {
			t.Errorf("namespace %s: created; the package has no Namespace object", n.Name)
		}
	}
	if want := []string{"gadgets", "gadgets-dashboards"}; !slices.Equal(ns, want) {
		t.Errorf("namespaces: got %v; want %v", ns, want)
	}
	if len(c.Claims.Unknown) != 0 {
		t.Errorf("unknown: got %v; want none", c.Claims.Unknown)
	}
	if len(c.Components) != 2 || !c.Components[0].Required || c.Components[1].Required || !c.Components[0].Charts[0].Rendered {
		t.Errorf("components: got %+v", c.Components)
	}
}

func TestContentsOfRawManifests(t *testing.T) {
	c := catalogFixture(t, "zarf-package-widgets-amd64-1.0.0.tar.zst")
	if got, want := crdNames(c), []string{"widgets.example.com from manifests/widgets-1.yaml"}; !slices.Equal(got, want) {
		t.Errorf("crds: got %v; want %v", got, want)
	}
	if len(c.Claims.Namespaces) != 1 || c.Claims.Namespaces[0].Name != "widgets-system" || !c.Claims.Namespaces[0].Created {
		t.Errorf("namespaces: got %+v; want widgets-system, created", c.Claims.Namespaces)
	}
	// A Role and RoleBinding are namespaced: no cluster-wide claim.
	if len(c.Claims.ClusterScoped) != 0 || len(c.Claims.ClusterRBAC) != 0 {
		t.Errorf("cluster-scoped %v, rbac %v; want none", c.Claims.ClusterScoped, c.Claims.ClusterRBAC)
	}
}

func TestContentsOfAPackageWhoseDeclaredCRDsLie(t *testing.T) {
	c := catalogFixture(t, "zarf-package-liar-amd64-0.9.0.tar.zst")
	if got, want := crdNames(c), []string{"sprockets.example.com from manifests/sprockets-0.yaml"}; !slices.Equal(got, want) {
		t.Errorf("crds: got %v; want %v (it declares cogs.example.com)", got, want)
	}
}

func componentTar(files map[string]string) []byte {
	var m []craft.Member
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	}) {
		m = append(m, craft.Member{Name: k, Body: []byte(files[k])})
	}
	return craft.Tar(m)
}

func TestAComponentTarballThatIsNotATarIsUnknownNotFatal(t *testing.T) {
	p := craft.Package{Name: "garbled", Version: "1.0.0", Extra: []craft.Member{{Name: "components/main.tar", Body: []byte(strings.Repeat("not a tar ", 100))}}}
	file := t.TempDir() + "/zarf-package-garbled-amd64-1.0.0.tar.zst"
	writeFile(t, file, p.Zst())
	a, err := Inspect(context.Background(), file, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	u := a.Candidate.Contents.Claims.Unknown
	if len(u) != 1 || u[0].Kind != facts.UnknownContents || !strings.Contains(u[0].Reason, "components/main.tar") {
		t.Fatalf("unknown: got %+v; want the component tarball reported unreadable", u)
	}
}

func TestAnOversizedManifestIsSkippedAndSaidSo(t *testing.T) {
	big := componentTar(map[string]string{"main/manifests/m-0.yaml": strings.Repeat("# padding\n", MaxContentFile/10+1)})
	p := craft.Package{Name: "big", Version: "1.0.0", Extra: []craft.Member{{Name: "components/main.tar", Body: big}}}
	file := t.TempDir() + "/zarf-package-big-amd64-1.0.0.tar.zst"
	writeFile(t, file, p.Zst())
	a, err := Inspect(context.Background(), file, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	u := a.Candidate.Contents.Claims.Unknown
	if len(u) != 1 || u[0].Subject != "manifests/m-0.yaml" || !strings.Contains(u[0].Reason, "over what the catalog reads") {
		t.Fatalf("unknown: got %+v; want the manifest named as over the limit", u)
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// What the catalog keeps of component tarballs comes from the readers'
// shared budget: archives each keeping MaxContents, read at once on many
// cores, never hold more than it, and each keeps all it may.
func TestKeptContentsShareTheMemoryBudget(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	dir := t.TempDir()
	manifest := strings.Repeat("# a comment line of a manifest kept at its cap\n", MaxContentFile/48)
	files := map[string]string{}
	for i := range MaxContents / MaxContentFile {
		files[fmt.Sprintf("main/manifests/m-%d.yaml", i)] = manifest
	}
	comp := componentTar(files)
	for i := range 12 {
		p := craft.Package{Name: fmt.Sprintf("app-%d", i), Version: "1.0.0", Extra: []craft.Member{{Name: "components/main.tar", Body: comp}}}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("zarf-package-app-%d-amd64-1.0.0.tar.zst", i)), p.Zst())
	}
	budget := NewBudget(24 << 20)
	d, err := ReadDir(context.Background(), dir, Options{Limits: Limits{Budget: budget}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Candidates) != 12 {
		t.Fatalf("read %d candidates (unusable %v); want 12", len(d.Candidates), d.Unusable)
	}
	for _, c := range d.Candidates {
		if u := c.Contents.Claims.Unknown; len(u) != 0 {
			t.Errorf("%s: %v; want every manifest kept", c.Name, u)
		}
	}
	if peak := budget.peak.Load(); peak > budget.Size() || peak < MaxContents {
		t.Fatalf("the readers held %d bytes at their peak; want between one archive's contents (%d) and the budget (%d)", peak, MaxContents, budget.Size())
	}
}

// The images a rendered chart's workloads use are claims beside those
// zarf.yaml lists: gadgets lists both its Deployment's images, so both
// are carried and nothing is used uncarried.
func TestImagesOfARenderedChartAreClaimsAndCarried(t *testing.T) {
	c := catalogFixture(t, "zarf-package-gadgets-amd64-2.1.0.tar.zst")
	var got []string
	for _, x := range c.Claims.Images {
		var used []string
		for _, o := range x.Used {
			used = append(used, o.Kind+"/"+o.Name+" from "+o.File)
		}
		got = append(got, fmt.Sprintf("%s carried=%v listed=%v used=%v", x.Reference, x.Carried, x.Components, used))
	}
	want := []string{
		"127.0.0.1:47301/demo/web:1.0.0 carried=true listed=[gadgets] used=[Deployment/gadgets from charts/gadgets-0.3.0.tgz: templates/deployment.yaml]",
		"127.0.0.1:47302/demo/worker:1.0.0 carried=true listed=[gadgets] used=[Deployment/gadgets from charts/gadgets-0.3.0.tgz: templates/deployment.yaml]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("images:\ngot  %q\nwant %q", got, want)
	}
}
