package registrytest_test

import (
	"fmt"
	"testing"

	"github.com/colonel-byte/zarf-planner/registry/registrytest"
)

// Start is called from a test, as net/http/httptest's NewServer is: the
// registry (Debian's docker-registry, on the loopback) is stopped when
// the test ends. Options put it behind basic auth or TLS. (Not run as an
// example: it needs a test, and the registry's binary.)
func ExampleStart() {
	test := func(t *testing.T) {
		r := registrytest.Start(t, registrytest.Options{User: "ops", Password: "secret"})
		// Plan oci://<r.Host>/<namespace> with the Docker config that
		// logs in to it.
		fmt.Println(r.Host, r.DockerConfig)
	}
	_ = test
}
