package cli

import (
	"context"
	"encoding/base32"
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
	"github.com/colonel-byte/zarf-planner/inspect/claims/renderproc/rendertest"
	"github.com/colonel-byte/zarf-planner/testdata/craft"
)

// chartPackageDir is a directory holding one package, name, of one
// chart made of template t (into namespace demo).
func chartPackageDir(t *testing.T, name, template string) string {
	t.Helper()
	tgz := rendertest.Chart(t, map[string]string{"templates/t.yaml": template})
	comp := craft.Tar([]craft.Member{{Name: "main/charts/demo-1.0.0.tgz", Body: tgz}})
	p := craft.Package{Name: name, Version: "1.0.0", Extra: []craft.Member{{Name: "components/main.tar", Body: comp}},
		Tamper: func(ms *[]craft.Member) {
			for i, m := range *ms {
				if m.Name == "zarf.yaml" {
					(*ms)[i].Body = append(slices.Clone(m.Body), "  charts:\n  - name: demo\n    version: 1.0.0\n    namespace: demo\n"...)
				}
			}
		}}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "zarf-package-"+name+"-amd64-1.0.0.tar.zst"), p.Zst(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A chart planned in cluster mode looks up a Namespace whose kapp
// annotation keeps a Secret whole (kapp.k14s.io/original), decodes the
// password from it and spells it, base32, into a namespace it creates and
// into the name of a second lookup (which the plan's warnings list, and
// the API server's access log would record). The answer holds no such
// annotation: the password is nowhere in the plan (JSON and text), its
// warnings, the saved plan or the page. And a chart that lists Secrets of
// every namespace is refused that list: no Secret's name reaches it.
func TestAChartLearnsNoSecretFromItsLookups(t *testing.T) {
	c := clustertest.Start(t)
	ctx := context.Background()
	const password = "hunter2pw"
	b64 := base64.StdEncoding.EncodeToString([]byte(password))
	b32 := strings.ToLower(strings.TrimRight(base32.StdEncoding.EncodeToString([]byte(b64)), "="))
	original := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"tenant"},"data":{"password":"` + b64 + `"}}`
	kapp := map[string]string{"kapp.k14s.io/original": original, "token": b64}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant", Annotations: kapp}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-credentials-of-tenant", Namespace: "tenant", Annotations: kapp}, Data: map[string][]byte{"password": []byte(password)}}
	if _, err := c.Client.CoreV1().Secrets("tenant").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secrets := []string{password, b64, b32}

	t.Run("an annotation holding a Secret", func(t *testing.T) {
		dir := chartPackageDir(t, "curious", `{{- $ns := lookup "v1" "Namespace" "" "tenant" }}
{{- $orig := dict }}
{{- if $ns }}{{ $orig = index $ns.metadata.annotations "kapp.k14s.io/original" | default "{}" | fromJson }}{{ end }}
{{- $enc := dig "data" "password" "" $orig | b32enc | lower | replace "=" "" }}
{{- $probe := lookup "v1" "ConfigMap" "default" (printf "probe%s" $enc) }}
apiVersion: v1
kind: Namespace
metadata: {name: {{ printf "leak%s" $enc | quote }}}
`)
		out := t.TempDir()
		saved, page := filepath.Join(out, "plan.json"), filepath.Join(out, "plan.html")
		code, doc, stderr := run(t, "plan", dir, "--mode", "cluster", "--kubeconfig", c.Kubeconfig, "-o", "json", "--save-to", saved, "--html-to", page)
		if code != ExitOK || !strings.Contains(doc, "its templates looked up: v1/ConfigMap default/probe (absent), v1/Namespace tenant (exists)") {
			t.Errorf("exit %d; want the plan, its warnings naming the lookups:\n%s%s", code, doc, stderr)
		}
		_, text, textErr := run(t, "plan", dir, "--mode", "cluster", "--kubeconfig", c.Kubeconfig)
		noSecret(t, secrets, map[string]string{"the JSON plan": doc + stderr, "the text plan": text + textErr}, saved, page)
	})

	t.Run("a list of every namespace's Secrets", func(t *testing.T) {
		dir := chartPackageDir(t, "lister", `{{- range $s := (lookup "v1" "Secret" "" "").items }}
{{- $probe := lookup "v1" "ConfigMap" "default" (printf "seen-%s" $s.metadata.name) }}
---
apiVersion: v1
kind: Namespace
metadata: {name: {{ printf "seen-%s" $s.metadata.name | quote }}}
{{- end }}
`)
		out := t.TempDir()
		saved := filepath.Join(out, "plan.json")
		code, doc, stderr := run(t, "plan", dir, "--mode", "cluster", "--kubeconfig", c.Kubeconfig, "-o", "json", "--save-to", saved)
		if !strings.Contains(doc, "lists secrets of every namespace, which the planner does not answer a chart") {
			t.Errorf("exit %d; want the list refused, said in the plan:\n%s%s", code, doc, stderr)
		}
		noSecret(t, append(slices.Clone(secrets), secret.Name), map[string]string{"the JSON plan": doc + stderr}, saved)
	})
}

// noSecret fails t when any of secrets is in any of outputs or of the
// files.
func noSecret(t *testing.T, secrets []string, outputs map[string]string, files ...string) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		outputs[f] = string(b)
	}
	for what, s := range outputs {
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds %q", what, secret)
			}
		}
	}
}
