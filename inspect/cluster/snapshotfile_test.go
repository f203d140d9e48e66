package cluster_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colonel-byte/zarf-planner/privdir/privdirtest"

	"github.com/colonel-byte/zarf-planner/inspect/cluster"
	"github.com/colonel-byte/zarf-planner/planner/facts"
	"github.com/colonel-byte/zarf-planner/privdir"
)

func TestLoadSnapshotRefusesAFIFOAtOnce(t *testing.T) {
	p := privdirtest.FIFO(t, "state.json")
	privdirtest.RefusedAtOnce(t, p, privdir.ErrNotRegular, func() error {
		_, err := cluster.LoadSnapshot(p)
		return err
	})
}

func TestLoadSnapshotRefusesASparseGiantUnread(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := cluster.LoadSnapshot(p); !errors.Is(err, privdir.ErrTooLarge) || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v, want a refusal of its size naming %s", err, p)
	}
}

func TestAKubeconfigThatIsAFIFOIsRefusedAtOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"Clients": func() error { _, err := cluster.Kube{Kubeconfig: p}.Clients(); return err },
		"Pinned":  func() error { _, _, err := cluster.Kube{Kubeconfig: p}.Pinned(); return err },
		"KUBECONFIG": func() error {
			t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent")+string(filepath.ListSeparator)+p)
			_, err := cluster.Kube{}.Clients()
			return err
		},
	} {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			if !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), p) {
				t.Fatalf("%s: err = %v, want a refusal naming %s", name, err, p)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still blocked on a FIFO kubeconfig after 5 s", name)
		}
	}
}

// TestAKubeconfigsCertificateThatIsAFIFOIsRefusedAtOnce: the files a
// context names are read by client-go by name; a FIFO among them is
// refused first, naming it.
func TestAKubeconfigsCertificateThatIsAFIFOIsRefusedAtOnce(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	if err := syscall.Mkfifo(ca, 0o600); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://c.example:6443", certificate-authority: ca.crt}
users:
- name: u
  user: {token: t}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"Clients": func() error { _, err := cluster.Kube{Kubeconfig: kc}.Clients(); return err },
		"Pinned":  func() error { _, _, err := cluster.Kube{Kubeconfig: kc}.Pinned(); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- f() }()
		select {
		case err := <-done:
			if !errors.Is(err, privdir.ErrNotRegular) || !strings.Contains(err.Error(), ca) {
				t.Fatalf("%s: err = %v, want a refusal naming %s", name, err, ca)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still blocked on a FIFO certificate after 5 s", name)
		}
	}
}

// A saved snapshot's ClusterRoles are held to what a live read keeps:
// names that are not printable left out, every other string made
// printable, and more roles than are read refused, naming the field.
func TestASnapshotsClusterRolesAreHeldAsALiveReadsAre(t *testing.T) {
	doc := `{"name":"lab","cluster_roles":[{"name":"evil\u0001","origin":{},"labels":[],"rules":[],"aggregates":false},` +
		`{"name":"ok","origin":{"kind":"Forged"},"labels":["a=\u001b[31m"],"rules":[{"verbs":["get\u0007"]}],"aggregates":false}]}`
	c, err := cluster.DecodeSnapshot("s.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ClusterRoles) != 1 || c.ClusterRoles[0].Name != "ok" || c.ClusterRoles[0].Origin.Kind != "ClusterRole" ||
		facts.Printable(c.ClusterRoles[0].Labels[0]) != c.ClusterRoles[0].Labels[0] || facts.Printable(c.ClusterRoles[0].Rules[0].Verbs[0]) != c.ClusterRoles[0].Rules[0].Verbs[0] {
		t.Errorf("roles %+v", c.ClusterRoles)
	}
	defer cluster.SetClusterRoleBounds(500, 1, cluster.MaxClusterRoleRules)()
	two := `{"name":"lab","cluster_roles":[{"name":"a","origin":{},"labels":[],"rules":[],"aggregates":false},{"name":"b","origin":{},"labels":[],"rules":[],"aggregates":false}]}`
	if _, err := cluster.DecodeSnapshot("s.json", []byte(two)); err == nil || !strings.Contains(err.Error(), "cluster_roles") {
		t.Errorf("err %v", err)
	}
}
