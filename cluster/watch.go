package cluster

import (
	"context"
	"fmt"

	apiextinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Resource names a kind of object a Watch can keep a cache of.
type Resource string

// The resources a Watch can keep.
const (
	WatchCRDs               Resource = "customresourcedefinitions"
	WatchStorageClasses     Resource = "storageclasses"
	WatchCSIDrivers         Resource = "csidrivers"
	WatchNamespaces         Resource = "namespaces"
	WatchZarfSecrets        Resource = "secrets in namespace zarf"
	WatchDeployments        Resource = "deployments"
	WatchStatefulSets       Resource = "statefulsets"
	WatchDaemonSets         Resource = "daemonsets"
	WatchOperatorConditions Resource = "operatorconditions"
)

// operatorConditions is OLM's OperatorCondition resource.
var operatorConditions = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v2", Resource: "operatorconditions"}

// informerOf builds the informer of each resource from a Watch's
// factories.
var informerOf = map[Resource]func(w *Watch) (cache.SharedIndexInformer, error){
	WatchCRDs: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.ext.Apiextensions().V1().CustomResourceDefinitions().Informer(), nil
	},
	WatchStorageClasses: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.core.Storage().V1().StorageClasses().Informer(), nil
	},
	WatchCSIDrivers: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.core.Storage().V1().CSIDrivers().Informer(), nil
	},
	WatchNamespaces: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.core.Core().V1().Namespaces().Informer(), nil
	},
	WatchZarfSecrets: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.zarf.Core().V1().Secrets().Informer(), nil
	},
	WatchDeployments: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.core.Apps().V1().Deployments().Informer(), nil
	},
	WatchStatefulSets: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.core.Apps().V1().StatefulSets().Informer(), nil
	},
	WatchDaemonSets: func(w *Watch) (cache.SharedIndexInformer, error) {
		return w.core.Apps().V1().DaemonSets().Informer(), nil
	},
	WatchOperatorConditions: func(w *Watch) (cache.SharedIndexInformer, error) {
		if w.dyn == nil {
			return nil, fmt.Errorf("watching operator conditions needs a dynamic client")
		}
		return w.dyn.ForResource(operatorConditions).Informer(), nil
	},
}

// Watch keeps caches of the objects of the resources added to it,
// current through informers (a list, then a watch, re-listed when the
// watch drops or the API server restarts): each resource is watched once,
// however many readers want it. It reads and never writes. Add the
// resources, Start, wait for Synced, read with Get (and wake on
// Changed), then Stop.
type Watch struct {
	core, zarf informers.SharedInformerFactory
	ext        apiextinformers.SharedInformerFactory
	dyn        dynamicinformer.DynamicSharedInformerFactory
	indexers   map[Resource]cache.Indexer
	synced     []cache.InformerSynced
	// changed is poked whenever a watched object changes.
	changed chan struct{}
	cancel  context.CancelFunc
}

// Watch builds a Watch of the cluster through its clients; it watches
// nothing until resources are added and it is started.
func (cl *Clients) Watch() *Watch {
	w := &Watch{
		core:     informers.NewSharedInformerFactory(cl.Kube, 0),
		zarf:     informers.NewSharedInformerFactoryWithOptions(cl.Kube, 0, informers.WithNamespace("zarf")),
		ext:      apiextinformers.NewSharedInformerFactory(cl.Ext, 0),
		indexers: map[Resource]cache.Indexer{},
		changed:  make(chan struct{}, 1),
		cancel:   func() {},
	}
	if cl.Dyn != nil {
		w.dyn = dynamicinformer.NewDynamicSharedInformerFactory(cl.Dyn, 0)
	}
	return w
}

// Add adds the informer of r (once). Add before Start.
func (w *Watch) Add(r Resource) error {
	if _, ok := w.indexers[r]; ok {
		return nil
	}
	build, ok := informerOf[r]
	if !ok {
		return fmt.Errorf("watching %q: not a resource a watch keeps", r)
	}
	inf, err := build(w)
	if err != nil {
		return err
	}
	poke := func() {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	})
	w.synced = append(w.synced, inf.HasSynced)
	w.indexers[r] = inf.GetIndexer()
	return nil
}

// Start starts every informer added; they stop at Stop or when ctx ends.
func (w *Watch) Start(ctx context.Context) {
	ctx, w.cancel = context.WithCancel(ctx)
	w.core.Start(ctx.Done())
	w.zarf.Start(ctx.Done())
	w.ext.Start(ctx.Done())
	if w.dyn != nil {
		w.dyn.Start(ctx.Done())
	}
}

// Synced waits until every informer added has listed its resource, and
// says whether they did before ctx ended.
func (w *Watch) Synced(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), w.synced...)
}

// Changed receives (at least once) after any watched object changes.
func (w *Watch) Changed() <-chan struct{} { return w.changed }

// Get returns the object of key (name, or namespace/name) from the cache
// of r; false when it is not there or r is not watched.
func (w *Watch) Get(r Resource, key string) (any, bool) {
	idx, ok := w.indexers[r]
	if !ok {
		return nil, false
	}
	obj, ok, _ := idx.GetByKey(key)
	return obj, ok
}

// Stop ends the informers and waits for their goroutines.
func (w *Watch) Stop() {
	w.cancel()
	w.core.Shutdown()
	w.zarf.Shutdown()
	w.ext.Shutdown()
	if w.dyn != nil {
		w.dyn.Shutdown()
	}
}
