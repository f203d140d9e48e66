package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// TestPinnedStandsAlone pins one of two contexts of a kubeconfig whose
// certificate files are named relative to it: the result holds that
// context alone, made current, with the files' bytes read in.
func TestPinnedStandsAlone(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"ca-b.crt": "CA OF B", "b.crt": "CERT OF B", "b.key": "KEY OF B"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443"}
- name: b
  cluster: {server: "https://b.example:6443", certificate-authority: ca-b.crt}
users:
- name: ua
  user: {token: a-token}
- name: ub
  user: {client-certificate: b.crt, client-key: b.key}
contexts:
- name: ctx-a
  context: {cluster: a, user: ua}
- name: ctx-b
  context: {cluster: b, user: ub, namespace: apps}
current-context: ctx-a
`), 0o600); err != nil {
		t.Fatal(err)
	}

	b, name, err := Kube{Kubeconfig: kc, Context: "ctx-b"}.Pinned()
	if err != nil || name != "ctx-b" {
		t.Fatalf("Pinned: %q %v", name, err)
	}
	got, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.CurrentContext != "ctx-b" || len(got.Contexts) != 1 || len(got.Clusters) != 1 || len(got.AuthInfos) != 1 {
		t.Fatalf("pinned kubeconfig is not ctx-b alone:\n%s", b)
	}
	c, u := got.Clusters["b"], got.AuthInfos["ub"]
	if c == nil || u == nil || c.Server != "https://b.example:6443" || string(c.CertificateAuthorityData) != "CA OF B" ||
		string(u.ClientCertificateData) != "CERT OF B" || string(u.ClientKeyData) != "KEY OF B" || got.Contexts["ctx-b"].Namespace != "apps" {
		t.Fatalf("pinned kubeconfig lost or did not read in what ctx-b uses:\n%s", b)
	}
	if strings.Contains(string(b), "a-token") {
		t.Errorf("pinned kubeconfig carries another context's credentials:\n%s", b)
	}

	// No context given: the kubeconfig's current one.
	if _, name, err := (Kube{Kubeconfig: kc}).Pinned(); err != nil || name != "ctx-a" {
		t.Errorf("default context: %q %v; want ctx-a", name, err)
	}
	// An unknown context names the ones there are.
	if _, _, err := (Kube{Kubeconfig: kc, Context: "ctx-c"}).Pinned(); err == nil || !strings.Contains(err.Error(), `no context "ctx-c" (it has: ctx-a, ctx-b)`) {
		t.Errorf("unknown context: %v", err)
	}
}
