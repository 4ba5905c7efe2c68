package endpointslices

import (
	"context"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// newCache is a manager's kind of cache (controller-runtime's informer
// cache, its reader and indexes) whose EndpointSlice informer lists
// slices from memory instead of an API server, which it never contacts.
// It is not started.
func newCache(t testing.TB, slices []discoveryv1.EndpointSlice) cache.Cache {
	t.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"), meta.RESTScopeNamespace)
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{
		Scheme: clientgoscheme.Scheme, Mapper: mapper,
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(memoryLister(slices), obj, resync, indexers)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// start runs c until the test ends and waits for its first sync.
func start(t testing.TB, c cache.Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cache: %v", err)
		}
	})
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
}

// memoryLister lists the slices and then watches nothing.
type memoryLister []discoveryv1.EndpointSlice

func (l memoryLister) List(metav1.ListOptions) (runtime.Object, error) {
	list := &discoveryv1.EndpointSliceList{Items: l}
	list.ResourceVersion = "1"
	return list, nil
}

func (memoryLister) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }

// IsWatchListSemanticsUnSupported tells client-go's reflector to list,
// then watch, as it does with an API server that streams no initial list.
func (memoryLister) IsWatchListSemanticsUnSupported() bool { return true }
