package caller

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/colonel-byte/zarf-planner/planner/options"
)

// TestKubeconfigs: a path given wins, made absolute; else KUBECONFIG's
// files, every one of them in order (absolute, empty entries and
// repeats dropped), for the daemon to merge as kubectl does; else
// ~/.kube/config.
func TestKubeconfigs(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sep := string(os.PathListSeparator)
	t.Setenv("HOME", "/home/op")
	t.Setenv(EnvKubeconfig, "")
	t.Setenv("KUBECONFIG", "/etc/a.yaml"+sep+sep+"rel/b.yaml"+sep+"/etc/a.yaml")
	if got, list := Kubeconfigs("rel/kc"); got != filepath.Join(wd, "rel/kc") || list != nil {
		t.Errorf("explicit relative path = %q %q; want it made absolute, alone", got, list)
	}
	if got, list := Kubeconfigs(""); got != "" || !slices.Equal(list, []string{"/etc/a.yaml", filepath.Join(wd, "rel/b.yaml")}) {
		t.Errorf("KUBECONFIG list = %q %q; want every file of it, in order", got, list)
	}
	t.Setenv("KUBECONFIG", sep)
	if got, list := Kubeconfigs(""); got != "/home/op/.kube/config" || list != nil {
		t.Errorf("KUBECONFIG of no file = %q %q; want ~/.kube/config", got, list)
	}
	t.Setenv("KUBECONFIG", "")
	if got, list := Kubeconfigs(""); got != "/home/op/.kube/config" || list != nil {
		t.Errorf("no flag, no KUBECONFIG = %q %q; want ~/.kube/config", got, list)
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
