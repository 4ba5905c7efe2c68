package queue_test

import (
	"runtime"
	"strconv"
	"testing"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// BenchmarkProxy compares, at each concurrency, the trivial app reached
// directly, through a bare httputil.ReverseProxy (default and pooled
// transport) and through the queue-proxy with every feature on (cc=0 and
// cc=10). ns/op is latency at c1 and the inverse of throughput at c10 and
// c100. Compare within one run: the app, the proxies and the load share
// the CPU.
func BenchmarkProxy(b *testing.B) {
	targets, err := queuebench.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer targets.Close()
	for _, c := range []int{1, 10, 100} {
		b.Run("c"+strconv.Itoa(c), func(b *testing.B) {
			for _, target := range targets.List() {
				b.Run(target.Name, func(b *testing.B) {
					client := queuebench.NewClient(c)
					defer client.CloseIdleConnections()
					if err := queuebench.Do(client, target.URL); err != nil { // warm a connection
						b.Fatal(err)
					}
					b.ReportAllocs()
					if c == 1 {
						for b.Loop() {
							if err := queuebench.Do(client, target.URL); err != nil {
								b.Fatal(err)
							}
						}
						return
					}
					// RunParallel starts parallelism×GOMAXPROCS goroutines.
					b.SetParallelism((c + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := queuebench.Do(client, target.URL); err != nil {
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
