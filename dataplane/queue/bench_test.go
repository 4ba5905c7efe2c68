package queue_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// BenchmarkProxy compares, at each concurrency, the trivial app reached
// directly, through a bare httputil.ReverseProxy and through the
// queue-proxy with every feature on (cc=0 and cc=10). ns/op is latency at
// c1 and the inverse of throughput at c10 and c100. Compare within one
// run: the app, the proxies and the load share the CPU.
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

// TestLoadReport prints requests/s and latency percentiles for every
// target at concurrency 1, 10 and 100. It only runs when KNIT_QUEUE_LOAD
// is set to the time per target and concurrency (e.g. 6s); the targets
// take turns in short slices so drift on a shared machine hits them all
// alike. It asserts nothing about timing.
func TestLoadReport(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("KNIT_QUEUE_LOAD"))
	if err != nil {
		t.Skip("set KNIT_QUEUE_LOAD=6s to print a load report")
	}
	targets, err := queuebench.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer targets.Close()
	const slices = 6
	for _, c := range []int{1, 10, 100} {
		results := make([][]queuebench.Result, len(targets.List()))
		for range slices {
			for i, target := range targets.List() {
				results[i] = append(results[i], queuebench.Load(context.Background(), target.URL, c, d/slices))
			}
		}
		for i, target := range targets.List() {
			r := queuebench.Merge(results[i])
			fmt.Printf("c%-4d %-13s %s\n", c, target.Name, r)
			if r.Errors > 0 {
				t.Errorf("%s at c%d: %d errors, first: %v", target.Name, c, r.Errors, r.FirstErr)
			}
		}
	}
}
