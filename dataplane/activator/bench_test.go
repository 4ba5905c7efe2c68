package activator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"testing"
	"time"
)

// BenchmarkActivator compares, at concurrency 1 and 10, a trivial
// replica (answering the probe) reached directly, through a bare
// httputil.ReverseProxy, and through the activator with
// containerConcurrency 0 and 10. ns/op is latency at c1 and the inverse of
// throughput at c10. Compare within one run: everything shares the CPU.
func BenchmarkActivator(b *testing.B) {
	replica := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(probeHeader) == probeValue {
			io.WriteString(w, probeValue)
			return
		}
		io.WriteString(w, "hello")
	}))
	defer replica.Close()
	target, _ := url.Parse(replica.URL)
	bare := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer bare.Close()
	targets := []struct{ name, url string }{{"direct", replica.URL}, {"reverseproxy", bare.URL}}
	for _, cc := range []int64{0, 10} {
		a, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		key := rev
		a.SetEndpoints(key, cc, []string{target.Host})
		for deadline := time.Now().Add(waitLimit); ; {
			if _, _, ready := a.get(key).thr.counts(); ready == 1 {
				break
			}
			if time.Now().After(deadline) {
				b.Fatal("the replica never became ready")
			}
			time.Sleep(time.Millisecond)
		}
		srv := httptest.NewServer(a)
		defer srv.Close()
		targets = append(targets, struct{ name, url string }{fmt.Sprintf("activator-cc%d", cc), srv.URL})
	}
	for _, c := range []int{1, 10} {
		b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) {
			for _, target := range targets {
				b.Run(target.name, func(b *testing.B) {
					tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: c}
					defer tr.CloseIdleConnections()
					client := &http.Client{Transport: tr}
					do := func() error {
						req, _ := http.NewRequest(http.MethodGet, target.url, nil)
						req.Header[NamespaceHeader] = []string{rev.Namespace}
						req.Header[RevisionHeader] = []string{rev.Name}
						resp, err := client.Do(req)
						if err != nil {
							return err
						}
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							return fmt.Errorf("status %d", resp.StatusCode)
						}
						return err
					}
					if err := do(); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					if c == 1 {
						for b.Loop() {
							if err := do(); err != nil {
								b.Fatal(err)
							}
						}
						return
					}
					b.SetParallelism((c + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := do(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				})
			}
		})
	}
}

// BenchmarkThrottler is the throttler's part of every request, an
// acquire and a release with a free endpoint, containerConcurrency 10
// over four replicas: alone, and one of two activators (its two).
func BenchmarkThrottler(b *testing.B) {
	for _, tc := range []struct {
		name  string
		peers peers
	}{
		{"alone", peers{}},
		{"shared", peers{index: 0, count: 2}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			addrs := []string{"10.0.0.1:8012", "10.0.0.2:8012", "10.0.0.3:8012", "10.0.0.4:8012"}
			thr := newThrottler("default/hello", 10, func() {}, time.Hour)
			thr.configure(10, time.Minute)
			thr.setPeers(tc.peers)
			thr.list(addrs)
			for _, addr := range addrs {
				thr.add(addr)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				ep, err := thr.acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				thr.release(ep)
			}
		})
	}
}
