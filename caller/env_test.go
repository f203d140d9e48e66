package caller

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

func TestKubeconfig(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", "/home/op")
	t.Setenv("KUBECONFIG", "/etc/a.yaml"+string(os.PathListSeparator)+"/etc/b.yaml")
	if got := Kubeconfig("rel/kc"); got != filepath.Join(wd, "rel/kc") {
		t.Errorf("explicit relative path = %q; want it made absolute", got)
	}
	if got := Kubeconfig(""); got != "/etc/a.yaml" {
		t.Errorf("KUBECONFIG list = %q; want its first entry", got)
	}
	t.Setenv("KUBECONFIG", "")
	if got := Kubeconfig(""); got != "/home/op/.kube/config" {
		t.Errorf("no flag, no KUBECONFIG = %q; want ~/.kube/config", got)
	}
}

// TestCluster: the options given win; else K8S_AUTH_KUBECONFIG and
// K8S_AUTH_CONTEXT.
func TestCluster(t *testing.T) {
	t.Setenv(EnvKubeconfig, "/env/kc")
	t.Setenv(EnvContext, "env-ctx")
	if got := Cluster(options.Cluster{}); got.Kubeconfig != "/env/kc" || got.Context != "env-ctx" {
		t.Errorf("nothing given: %+v; want the env's", got)
	}
	if got := Cluster(options.Cluster{Kubeconfig: "/flag/kc", Context: "flag-ctx"}); got.Kubeconfig != "/flag/kc" || got.Context != "flag-ctx" {
		t.Errorf("both given: %+v; want them", got)
	}
}
