package barrier

import (
	"context"
	"fmt"

	apiextinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/colonel-byte/zarf-planner/inspect/cluster"
)

// resource is what a check reads through an informer.
type resource string

// Resources.
const (
	resCRDs               resource = "customresourcedefinitions"
	resStorageClasses     resource = "storageclasses"
	resCSIDrivers         resource = "csidrivers"
	resNamespaces         resource = "namespaces"
	resZarfSecrets        resource = "secrets in namespace zarf"
	resDeployments        resource = "deployments"
	resStatefulSets       resource = "statefulsets"
	resDaemonSets         resource = "daemonsets"
	resOperatorConditions resource = "operatorconditions"
)

// operatorConditions is OLM's OperatorCondition resource.
var operatorConditions = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v2", Resource: "operatorconditions"}

// starters build the informer of each resource from a wait's factories.
var starters = map[resource]func(f *watch) (cache.SharedIndexInformer, error){
	resCRDs: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.ext.Apiextensions().V1().CustomResourceDefinitions().Informer(), nil
	},
	resStorageClasses: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.core.Storage().V1().StorageClasses().Informer(), nil
	},
	resCSIDrivers: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.core.Storage().V1().CSIDrivers().Informer(), nil
	},
	resNamespaces: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.core.Core().V1().Namespaces().Informer(), nil
	},
	resZarfSecrets: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.zarf.Core().V1().Secrets().Informer(), nil
	},
	resDeployments: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.core.Apps().V1().Deployments().Informer(), nil
	},
	resStatefulSets: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.core.Apps().V1().StatefulSets().Informer(), nil
	},
	resDaemonSets: func(w *watch) (cache.SharedIndexInformer, error) {
		return w.core.Apps().V1().DaemonSets().Informer(), nil
	},
	resOperatorConditions: func(w *watch) (cache.SharedIndexInformer, error) {
		if w.dyn == nil {
			return nil, fmt.Errorf("waiting for operator conditions needs a dynamic client")
		}
		return w.dyn.ForResource(operatorConditions).Informer(), nil
	},
}

// watch holds the informers one wait reads: each resource is watched
// once, however many checks read it.
type watch struct {
	core, zarf informers.SharedInformerFactory
	ext        apiextinformers.SharedInformerFactory
	dyn        dynamicinformer.DynamicSharedInformerFactory
	indexers   map[resource]cache.Indexer
	synced     []cache.InformerSynced
	// changed is poked whenever a watched object changes.
	changed chan struct{}
}

func newWatch(cl *cluster.Clients) *watch {
	w := &watch{
		core:     informers.NewSharedInformerFactory(cl.Kube, 0),
		zarf:     informers.NewSharedInformerFactoryWithOptions(cl.Kube, 0, informers.WithNamespace("zarf")),
		ext:      apiextinformers.NewSharedInformerFactory(cl.Ext, 0),
		indexers: map[resource]cache.Indexer{},
		changed:  make(chan struct{}, 1),
	}
	if cl.Dyn != nil {
		w.dyn = dynamicinformer.NewDynamicSharedInformerFactory(cl.Dyn, 0)
	}
	return w
}

// watch adds the informer of r (once).
func (w *watch) watch(r resource) error {
	if _, ok := w.indexers[r]; ok {
		return nil
	}
	inf, err := starters[r](w)
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

// start starts every informer added; they stop when ctx ends.
func (w *watch) start(ctx context.Context) {
	w.core.Start(ctx.Done())
	w.zarf.Start(ctx.Done())
	w.ext.Start(ctx.Done())
	if w.dyn != nil {
		w.dyn.Start(ctx.Done())
	}
}

// stop ends the informers and waits for their goroutines.
func (w *watch) stop(cancel context.CancelFunc) {
	cancel()
	w.core.Shutdown()
	w.zarf.Shutdown()
	w.ext.Shutdown()
	if w.dyn != nil {
		w.dyn.Shutdown()
	}
}

// get returns the object of key from the cache of r.
func (w *watch) get(r resource, key string) (any, bool) {
	idx, ok := w.indexers[r]
	if !ok {
		return nil, false
	}
	obj, ok, _ := idx.GetByKey(key)
	return obj, ok
}
