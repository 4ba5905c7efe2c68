package main

import (
	"context"
	"fmt"
	"io"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// serviceWatch sees the Services of some namespaces through one watch:
// listing a thousand Services every poll would load the API server the
// bench measures more than knit does.
type serviceWatch struct {
	cache  cache.Cache
	cancel context.CancelFunc
}

func watchServices(ctx context.Context, cfg *rest.Config, scheme *k8sruntime.Scheme, namespaces ...string) (*serviceWatch, error) {
	byNS := map[string]cache.Config{}
	for _, ns := range namespaces {
		byNS[ns] = cache.Config{}
	}
	c, err := cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: byNS})
	if err != nil {
		return nil, fmt.Errorf("watch Services: %w", err)
	}
	if _, err := c.GetInformer(ctx, &servingv1.Service{}); err != nil {
		return nil, fmt.Errorf("watch Services: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("watch Services: cache never synced")
	}
	return &serviceWatch{cache: c, cancel: cancel}, nil
}

func (w *serviceWatch) stop() { w.cancel() }

// readyAt reports whether a Service is Ready for its current spec: the
// controller observed its generation and said Ready.
func readyAt(s *servingv1.Service) bool {
	return s.Status.ObservedGeneration == s.Generation && s.Status.IsReady()
}

// count is how many Services of namespace done says are done, and how
// many there are.
func (w *serviceWatch) count(ctx context.Context, namespace string, done func(*servingv1.Service) bool) (n, of int, err error) {
	n, of, _, err = w.survey(ctx, namespace, done)
	return n, of, err
}

// survey is count, and the first Service whose Ready is False (a crashing
// app, a failed build): what a wait should stop on and name, rather than
// run to its timeout.
func (w *serviceWatch) survey(ctx context.Context, namespace string, done func(*servingv1.Service) bool) (n, of int, failed string, err error) {
	var list servingv1.ServiceList
	if err := w.cache.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return 0, 0, "", err
	}
	for i := range list.Items {
		svc := &list.Items[i]
		if done(svc) {
			n++
		}
		if ready := svc.Status.GetCondition(duckv1.ConditionReady); failed == "" && ready.IsFalse() && svc.Status.ObservedGeneration == svc.Generation {
			failed = fmt.Sprintf("%s/%s: %s: %s", svc.Namespace, svc.Name, ready.Reason, ready.Message)
		}
	}
	return n, len(list.Items), failed, nil
}

// progress is how a wait went: when its first Service was done and when
// the last was, from the wait's start.
type progress struct {
	first, all time.Duration
}

// waitDone waits until want Services of namespace are done, polling the
// watch's cache every 100ms and printing a line to out every 10s.
func (w *serviceWatch) waitDone(ctx context.Context, began time.Time, namespace string, want int, timeout time.Duration, done func(*servingv1.Service) bool, out io.Writer) (progress, error) {
	var p progress
	deadline := began.Add(timeout)
	lastSay := time.Now()
	for {
		n, of, failed, err := w.survey(ctx, namespace, done)
		if err != nil {
			return p, err
		}
		if failed != "" {
			return p, fmt.Errorf("Service %s", failed)
		}
		if n > 0 && p.first == 0 {
			p.first = time.Since(began)
		}
		if n >= want {
			p.all = time.Since(began)
			return p, nil
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("%d of %d Services in %s done after %s (%d exist)", n, want, namespace, timeout, of)
		}
		if time.Since(lastSay) >= 10*time.Second {
			fmt.Fprintf(out, "scale: %s: %d of %d done after %s\n", namespace, n, want, time.Since(began).Round(time.Second))
			lastSay = time.Now()
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return p, err
		}
	}
}
