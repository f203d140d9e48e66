package clustertest_test

import (
	"fmt"
	"testing"

	"github.com/colonel-byte/zarf-planner/cluster/clustertest"
)

// Start is called from a test, as net/http/httptest's NewServer is: a
// real kube-apiserver and etcd (envtest) prepared for `zarf package
// deploy`, stopped when the test ends. (Not run as an example: it needs a
// test, and the control plane's binaries from make tools.)
func ExampleStart() {
	test := func(t *testing.T) {
		c := clustertest.Start(t)
		// Deploy an archive with the real zarf CLI, then plan against
		// the cluster with --mode cluster --kubeconfig c.Kubeconfig.
		fmt.Println(c.Kubeconfig)
	}
	_ = test
}
