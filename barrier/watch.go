package barrier

import (
	"context"

	"github.com/colonel-byte/zarf-planner/cluster"
)

// store is what a check judges from: the cached objects of the resources
// it watches (cluster's Watch keeps them).
type store interface {
	// Get returns the object of key (name, or namespace/name) of r.
	Get(r cluster.Resource, key string) (any, bool)
}

// watcher is what a wait reads the cluster through: a store it adds the
// resources of its checks to, starts, waits on until listed, wakes on
// when an object changes, and stops. cluster.Clients.Watch builds one.
type watcher interface {
	store
	Add(r cluster.Resource) error
	Start(ctx context.Context)
	Synced(ctx context.Context) bool
	Changed() <-chan struct{}
	Stop()
}

// The Watch of cluster is a wait's watcher.
var _ watcher = (*cluster.Watch)(nil)
