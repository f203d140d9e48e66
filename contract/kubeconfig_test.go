package contract

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCallerKubeconfig(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", "/home/op")
	t.Setenv("KUBECONFIG", "/etc/a.yaml"+string(os.PathListSeparator)+"/etc/b.yaml")
	if got := CallerKubeconfig("rel/kc"); got != filepath.Join(wd, "rel/kc") {
		t.Errorf("explicit relative path = %q; want it made absolute", got)
	}
	if got := CallerKubeconfig(""); got != "/etc/a.yaml" {
		t.Errorf("KUBECONFIG list = %q; want its first entry", got)
	}
	t.Setenv("KUBECONFIG", "")
	if got := CallerKubeconfig(""); got != "/home/op/.kube/config" {
		t.Errorf("no flag, no KUBECONFIG = %q; want ~/.kube/config", got)
	}
}
