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

// A kubeconfig client-go cannot decode is refused with a message that
// names the file and says what is wrong in words, never a Go type; what
// client-go accepts (an empty file, a mapping with fields it does not
// know) is left to it.
func TestAKubeconfigThatIsNotOneIsNamedInWords(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // "" body: accepted as client-go accepts it
	}{
		{"not YAML", "apiVersion: v1\nkind: Config\nclusters: [\n", []string{"is not YAML", "line"}},
		{"a sentence", "this is not a kubeconfig\n", []string{"holds a string, not a mapping"}},
		{"a list", "- a\n- b\n", []string{"holds a list, not a mapping"}},
		{"a field of another type", "apiVersion: v1\nkind: Config\nclusters: 5\n", []string{"field clusters is a number where a list belongs"}},
		{"a nested field of another type", "apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster: {server: [1]}\n", []string{"field clusters.cluster.server is a list where a string belongs"}},
		{"empty", "\n", nil},
		{"an unknown field", "apiVersion: v1\nkind: Config\nsomething: else\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(kc, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := Kube{Kubeconfig: kc}.RESTConfig()
			if tt.want == nil {
				if err != nil && strings.Contains(err.Error(), "a kubeconfig is a YAML mapping") {
					t.Errorf("refused what client-go accepts: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted; want a refusal")
			}
			msg := err.Error()
			for _, w := range append(tt.want, "kubeconfig "+kc) {
				if !strings.Contains(msg, w) {
					t.Errorf("the message %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, "Go value") || strings.Contains(msg, "Go struct") || strings.Contains(msg, "struct {") {
				t.Errorf("the message names a Go type: %q", msg)
			}
			if _, _, err := (Kube{Kubeconfig: kc}).Pinned(); err == nil || err.Error() != msg {
				t.Errorf("Pinned says %v; want what RESTConfig says", err)
			}
		})
	}
}

// TestAPrecedenceListIsMergedAsKubectlMergesIt: the files of a KUBECONFIG
// list are merged, the first to set a value winning, a missing one passed
// over; a context only the second file holds is found; a list none of
// whose files exists is an error naming them, not an empty config.
func TestAPrecedenceListIsMergedAsKubectlMergesIt(t *testing.T) {
	dir := t.TempDir()
	first, second, missing := filepath.Join(dir, "first"), filepath.Join(dir, "second"), filepath.Join(dir, "missing")
	for p, body := range map[string]string{
		first: `apiVersion: v1
kind: Config
clusters: [{name: dev, cluster: {server: "https://dev.example:6443"}}]
users: [{name: dev, user: {token: dev-token}}]
contexts: [{name: dev, context: {cluster: dev, user: dev}}]
current-context: dev
`,
		second: `apiVersion: v1
kind: Config
clusters: [{name: prod, cluster: {server: "https://prod.example:6443"}}]
users: [{name: prod, user: {token: prod-token}}]
contexts: [{name: prod, context: {cluster: prod, user: prod}}]
current-context: prod
`,
	} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	list := []string{missing, first, second}
	cfg, name, err := Kube{Precedence: list, Context: "prod"}.RESTConfig()
	if err != nil || name != "prod" || cfg.Host != "https://prod.example:6443" || cfg.BearerToken != "prod-token" {
		t.Fatalf("context prod of the second file: %v %q %v; want prod's server and token", cfg, name, err)
	}
	// The first file's current context wins, as with kubectl.
	if cfg, name, err := (Kube{Precedence: list}).RESTConfig(); err != nil || name != "dev" || cfg.Host != "https://dev.example:6443" {
		t.Errorf("no context: %q %v; want the first file's current context, dev", name, err)
	}
	if b, name, err := (Kube{Precedence: list, Context: "prod"}).Pinned(); err != nil || name != "prod" || strings.Contains(string(b), "dev-token") {
		t.Errorf("pinned prod: %q %v\n%s", name, err, b)
	}
	// An explicit path reads that file alone.
	if _, _, err := (Kube{Kubeconfig: first, Precedence: list, Context: "prod"}).Pinned(); err == nil || !strings.Contains(err.Error(), `no context "prod" (it has: dev)`) {
		t.Errorf("explicit first file, context prod: %v; want prod not found in it", err)
	}
	if _, _, err := (Kube{Precedence: []string{missing}}).RESTConfig(); err == nil || !strings.Contains(err.Error(), "none of the files KUBECONFIG lists exists ("+missing+")") {
		t.Errorf("no file of the list exists: %v; want an error naming it", err)
	}
}
