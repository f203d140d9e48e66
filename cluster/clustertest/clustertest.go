// Package clustertest starts a real kube-apiserver and etcd for tests, through
// controller-runtime's envtest: the kube-apiserver and etcd `make tools`
// builds into .tools/bin from the Go module proxy. It prepares the cluster the
// way the zarf CLI needs to deploy with --connected when no controllers
// run: a Node, a Pod whose status is Running, and the default
// ServiceAccount. It is test support, used by tests only.
package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Cluster is a running test API server.
type Cluster struct {
	Config *rest.Config
	// Kubeconfig is a file with an admin context for the cluster.
	Kubeconfig string
	Client     kubernetes.Interface
	env        *envtest.Environment
}

// RepoRoot finds the repository root (the directory holding go.mod) from
// the test's working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "testdata", "tools")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no repository root above the working directory")
		}
		dir = parent
	}
}

// assets fills dir with the kube-apiserver and etcd envtest expects.
func assets(dir string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	apiserver := filepath.Join(root, ".tools", "bin", "kube-apiserver")
	if _, err := os.Stat(apiserver); err != nil {
		return fmt.Errorf("%s is missing: run `make tools` (make test does)", apiserver)
	}
	etcd := filepath.Join(root, ".tools", "bin", "etcd")
	if _, err := os.Stat(etcd); err != nil {
		return fmt.Errorf("%s is missing: run `make tools` (make test does)", etcd)
	}
	for name, target := range map[string]string{"kube-apiserver": apiserver, "etcd": etcd} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// Start starts a control plane for the test and stops it when the test
// ends.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := Launch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Logf("stopping the control plane: %v", err)
		}
	})
	return c
}

// Launch starts a control plane outside a test (dir holds its binaries
// and the admin kubeconfig, dir/kubeconfig); Stop ends it.
func Launch(dir string) (*Cluster, error) {
	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		return nil, err
	}
	if err := assets(bin); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    bin,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting kube-apiserver and etcd: %w", err)
	}
	c := &Cluster{Config: cfg, env: env}
	if err := c.finish(dir); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return c, nil
}

// Stop stops the control plane.
func (c *Cluster) Stop() error { return c.env.Stop() }

func (c *Cluster) finish(dir string) error {
	user, err := c.env.ControlPlane.AddUser(envtest.User{Name: "zarf-planner-test", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding an admin user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return err
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kc, 0o600); err != nil {
		return err
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	if err := c.prepare(context.Background()); err != nil {
		return fmt.Errorf("preparing the cluster for zarf: %w", err)
	}
	return nil
}

// UserKubeconfig writes a kubeconfig for a user with no permissions at
// all (no groups), to test what a refused request looks like.
func (c *Cluster) UserKubeconfig(t testing.TB, name string) string {
	t.Helper()
	user, err := c.env.ControlPlane.AddUser(envtest.User{Name: name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// prepare creates what a cluster without controllers lacks for zarf: a
// Node (amd64), a Running Pod and the default ServiceAccount.
func (c *Cluster) prepare(ctx context.Context) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}},
	}
	created, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
	case err != nil:
		return fmt.Errorf("creating node: %w", err)
	default:
		// What a kubelet reports of its node: zarf refuses a package
		// with images for a cluster whose nodes report no architecture.
		created.Status.NodeInfo.Architecture, created.Status.NodeInfo.OperatingSystem = "amd64", "linux"
		if _, err := c.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("reporting the node's architecture: %w", err)
		}
	}
	if _, err := c.Client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the default service account: %w", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "running", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:   "node-1",
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}},
		},
	}
	running, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating a pod: %w", err)
	}
	running.Status.Phase = corev1.PodRunning
	if _, err := c.Client.CoreV1().Pods("default").UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("marking the pod Running: %w", err)
	}
	return nil
}

// Deploy runs `zarf package deploy --confirm --connected` on an archive
// against the cluster, with the real zarf CLI `make tools` builds.
func (c *Cluster) Deploy(t testing.TB, archive string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	zarf := filepath.Join(root, ".tools", "bin", "zarf")
	if _, err := os.Stat(zarf); err != nil {
		t.Fatalf("%s is missing: run `make tools`", zarf)
	}
	cmd := exec.Command(zarf, "package", "deploy", archive, "--confirm", "--connected", "--log-level", "warn", "--no-color")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig, "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zarf package deploy %s: %v\n%s", filepath.Base(archive), err, out)
	}
}

// RestartAPIServer kills the kube-apiserver (SIGKILL, as a crash would) and
// starts it again with the very same command line, so it serves the same
// address, certificates and etcd data. It returns once the server answers.
// (envtest's own Stop/Start cannot do this: after a stop timeout it
// deletes the certificates and will not start again.)
func (c *Cluster) RestartAPIServer(t testing.TB) {
	t.Helper()
	certDir := c.env.ControlPlane.APIServer.CertDir
	pid, args := findProcess(t, "kube-apiserver", certDir)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing kube-apiserver pid %d: %v", pid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kube-apiserver again: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(60 * time.Second); ; {
		if _, err := c.Client.Discovery().ServerVersion(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("kube-apiserver did not answer within 60s of its restart")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// findProcess finds the process running binary whose command line mentions
// marker, and returns its pid and command line.
func findProcess(t testing.TB, binary, marker string) (int, []string) {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if filepath.Base(args[0]) == binary && strings.Contains(string(raw), marker) {
			return pid, args
		}
	}
	t.Fatalf("no %s process mentions %s", binary, marker)
	return 0, nil
}

// KubeconfigList writes two kubeconfig files and returns them as a
// KUBECONFIG value (joined with the path list separator), the way an
// operator keeps one file per cluster: the first file reaches no cluster
// (its context "dev", made current, names an address nothing listens
// on), the second holds this cluster's admin credentials under the
// context name given (current there, but the first file's current
// context wins when kubectl merges them). Only a reader that merges the
// list, as kubectl does, finds the context.
func (c *Cluster) KubeconfigList(t testing.TB, context string) string {
	t.Helper()
	admin, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cur, ok := admin.Contexts[admin.CurrentContext]
	if !ok {
		t.Fatalf("the admin kubeconfig %s has no current context", c.Kubeconfig)
	}
	second := clientcmdapi.NewConfig()
	second.Clusters[context] = admin.Clusters[cur.Cluster]
	second.AuthInfos[context] = admin.AuthInfos[cur.AuthInfo]
	second.Contexts[context] = &clientcmdapi.Context{Cluster: context, AuthInfo: context}
	second.CurrentContext = context
	first := clientcmdapi.NewConfig()
	first.Clusters["dev"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	first.AuthInfos["dev"] = &clientcmdapi.AuthInfo{Token: "dev-token"}
	first.Contexts["dev"] = &clientcmdapi.Context{Cluster: "dev", AuthInfo: "dev"}
	first.CurrentContext = "dev"
	dir := t.TempDir()
	var files []string
	for i, cfg := range []*clientcmdapi.Config{first, second} {
		p := filepath.Join(dir, fmt.Sprintf("kubeconfig-%d", i+1))
		if err := clientcmd.WriteToFile(*cfg, p); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return strings.Join(files, string(filepath.ListSeparator))
}
