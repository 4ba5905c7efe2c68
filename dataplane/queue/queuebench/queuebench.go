// Package queuebench sets up the side-by-side comparison `make bench` and
// the queue package's Go benchmarks measure: one trivial app on loopback,
// reached directly, through a bare httputil.ReverseProxy (the floor any
// Go proxy starts from: once with http.DefaultTransport's two idle
// connections per host, once with a pool sized as a production proxy
// sizes it) and through knit's queue-proxy with every feature on, at
// containerConcurrency 0 and 10. It also has a small closed-loop load
// generator reporting throughput and latency percentiles, for request
// shapes beyond the small GET (shape.go): a POST with a body, a streamed
// answer, and h2c end to end. Every server here takes HTTP/1.1 and h2c.
//
// It lives apart from package queue so the sidecar binary does not carry it.
package queuebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/knitops/knit/dataplane/queue"
	"github.com/knitops/knit/dataplane/queue/queuebench/bare"
)

// Target names, in the order Targets lists them.
const (
	Direct             = "direct"
	ReverseProxy       = "reverseproxy"
	ReverseProxyPooled = "reverseproxy-pooled"
	QueueCC0           = "queue-cc0"
	QueueCC10          = "queue-cc10"
)

// AppBody is what the trivial app answers a GET.
const AppBody = "Hello from knit!\n"

// Target is one way to reach the app.
type Target struct {
	Name string
	URL  string
}

// Targets are the running servers; Close stops them.
type Targets struct {
	list   []Target
	cancel context.CancelFunc
	wg     sync.WaitGroup
	close  []func()
	errs   chan error
}

// Start runs the app and the four proxies on loopback ports.
func Start() (*Targets, error) {
	ctx, cancel := context.WithCancel(context.Background())
	t := &Targets{cancel: cancel, errs: make(chan error, 4)}
	fail := func(err error) (*Targets, error) {
		t.Close()
		return nil, err
	}

	appAddr, err := t.serve(App())
	if err != nil {
		return fail(err)
	}
	appURL := &url.URL{Scheme: "http", Host: appAddr}
	t.list = append(t.list, Target{Direct, appURL.String()})

	defaultAddr, err := t.serve(httputil.NewSingleHostReverseProxy(appURL))
	if err != nil {
		return fail(err)
	}
	t.list = append(t.list, Target{ReverseProxy, "http://" + defaultAddr})
	pooled, err := t.serve(bare.NewPooled(appURL))
	if err != nil {
		return fail(err)
	}
	t.list = append(t.list, Target{ReverseProxyPooled, "http://" + pooled})

	_, portStr, _ := net.SplitHostPort(appAddr)
	userPort, _ := strconv.Atoi(portStr)
	for _, q := range []struct {
		name string
		cc   int
	}{{QueueCC0, 0}, {QueueCC10, 10}} {
		addr, err := t.startQueue(ctx, userPort, q.cc)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", q.name, err))
		}
		t.list = append(t.list, Target{q.name, "http://" + addr})
	}
	return t, nil
}

// List is every target, direct first.
func (t *Targets) List() []Target { return slices.Clone(t.list) }

// Close stops every server.
func (t *Targets) Close() error {
	t.cancel()
	for _, c := range t.close {
		c()
	}
	t.wg.Wait()
	close(t.errs)
	var errs []error
	for err := range t.errs {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (t *Targets) serve(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute, Protocols: bare.Protocols()}
	t.close = append(t.close, func() { srv.Close() })
	t.wg.Go(func() { srv.Serve(ln) })
	return ln.Addr().String(), nil
}

// startQueue runs a queue-proxy with every feature on: breaker (cc>0),
// all three timeouts, readiness probing, metrics and stats.
func (t *Targets) startQueue(ctx context.Context, userPort, cc int) (string, error) {
	cfg, err := queue.ConfigFromEnv(func(string) string { return "" })
	if err != nil {
		return "", err
	}
	cfg.ListenHost = "127.0.0.1"
	cfg.ServingPort, cfg.AdminPort, cfg.MetricsPort = 0, 0, 0
	cfg.UserPort = userPort
	cfg.ContainerConcurrency = cc
	cfg.QueueDepth = 10_000 // the load generator may run far above cc
	cfg.RevisionTimeout = 300 * time.Second
	cfg.ResponseStartTimeout = 60 * time.Second
	cfg.IdleTimeout = 60 * time.Second
	cfg.DrainQuietPeriod = 0
	cfg.Namespace, cfg.Configuration, cfg.Revision, cfg.Pod = "bench", "app", "app-bench", "app-bench-pod"
	s, err := queue.NewServer(cfg)
	if err != nil {
		return "", err
	}
	t.wg.Go(func() {
		if err := s.Serve(ctx); err != nil {
			t.errs <- err
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !s.Ready() {
		if time.Now().After(deadline) {
			return "", errors.New("queue-proxy never saw the app ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return s.ServingAddr().String(), nil
}

// NewClient returns a client that keeps enough idle connections for
// concurrency workers, so the load generator itself does not churn
// connections.
func NewClient(concurrency int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        max(concurrency, 2),
		MaxIdleConnsPerHost: max(concurrency, 2),
		DisableCompression:  true,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// Do sends one GET and reads the whole answer, failing on anything but
// 200.
func Do(client *http.Client, url string) error {
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return nil
}
