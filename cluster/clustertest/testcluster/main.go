// Command testcluster runs the test control plane (the kube-apiserver make
// tools builds, Debian's etcd, prepared for zarf) until SIGTERM, for
// molecule's cluster scenario: it writes DIR/kubeconfig once the cluster
// answers and DIR/pid. It is test support, not part of the product.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

func main() {
	dir := flag.String("dir", "", "directory for the binaries, kubeconfig and pid")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "testcluster: --dir is required")
		os.Exit(2)
	}
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "testcluster:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	c, err := clustertest.Launch(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "pid"), fmt.Appendf(nil, "%d\n", os.Getpid()), 0o600); err != nil {
		return err
	}
	<-sigs
	return c.Stop()
}
