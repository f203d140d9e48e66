package clustertest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestZarfDeploysToTheTestCluster deploys a real zarf package with the real
// zarf CLI and checks zarf's deployed-package secret appears.
func TestZarfDeploysToTheTestCluster(t *testing.T) {
	c := Start(t)
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil || v.GitVersion != "v1.36.3" {
		t.Fatalf("server version %v, %v; want v1.36.3", v, err)
	}
	root, _ := RepoRoot()
	c.Deploy(t, filepath.Join(root, "examples", "bundles", "reference-stack", "zarf-package-init-amd64-0.1.0.tar.zst"))
	secrets, err := c.Client.CoreV1().Secrets("zarf").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range secrets.Items {
		names = append(names, s.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "zarf-package-init") {
		t.Errorf("secrets in zarf: %v; want zarf-package-init", names)
	}
}
