package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// options are the bench's flags; the defaults are what `make bench` runs.
type options struct {
	duration    time.Duration
	slices      int
	warmup      time.Duration
	maxRequests int
	concurrency []int
	only        []string
	coldRuns    int
	cluster     string // kubeconfig of the test cluster; empty skips the cluster part
	clusterRuns int
	binDir      string
	out         string
	cpuProfile  string
}

func parseFlags() (options, error) {
	o := options{}
	conc := flag.String("concurrency", "1,10,100", "comma-separated closed-loop concurrencies")
	only := flag.String("paths", "", "comma-separated path names to measure (default all): "+strings.Join(pathNames(), ","))
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "measured time per path and concurrency")
	flag.IntVar(&o.slices, "slices", 3, "slices each cell's time is cut into; paths take turns slice by slice so drift hits them alike")
	flag.DurationVar(&o.warmup, "warmup", 100*time.Millisecond, "unmeasured load before each slice")
	flag.IntVar(&o.maxRequests, "max-requests", 1_000_000, "requests per path and concurrency at most")
	flag.IntVar(&o.coldRuns, "cold-runs", 5, "cold starts to time in knit dev (0 skips the cold-start part)")
	flag.StringVar(&o.cluster, "cluster-kubeconfig", "", "kubeconfig of the test cluster (make cluster) to install knit on and time real pods; empty skips it")
	flag.IntVar(&o.clusterRuns, "cluster-runs", 5, "cold starts and plain pod starts to time on the cluster")
	flag.StringVar(&o.binDir, "bin-dir", "bin", "where `make tools` put kube-apiserver, etcd and kubectl")
	flag.StringVar(&o.out, "out", "docs/benchmarks.md", "markdown report to write (empty: print only)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the request-path part (proxies and load generator) here")
	flag.Parse()
	for _, f := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-concurrency %q: want positive integers", *conc)
		}
		o.concurrency = append(o.concurrency, n)
	}
	if *only != "" {
		for _, name := range strings.Split(*only, ",") {
			if !slices.Contains(pathNames(), name) {
				return o, fmt.Errorf("-paths: unknown path %q (have %s)", name, strings.Join(pathNames(), ","))
			}
			o.only = append(o.only, name)
		}
	}
	if o.slices < 1 || o.duration <= 0 || o.maxRequests < o.slices || o.coldRuns < 0 {
		return o, fmt.Errorf("-slices, -duration and -max-requests must be positive, -cold-runs not negative")
	}
	return o, nil
}

func pathNames() []string {
	return []string{queuebench.Direct, queuebench.ReverseProxy, queuebench.QueueCC0, queuebench.QueueCC10, pathIngressQueue, pathIngressActivator}
}

func main() {
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	began := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	binDir, err := filepath.Abs(o.binDir)
	if err != nil {
		return err
	}
	rep := &report{machine: readMachine(root), opts: o}

	cells, err := measurePaths(ctx, o, os.Stderr)
	if err != nil {
		return err
	}
	rep.cells = cells
	if o.coldRuns > 0 {
		if rep.cold, err = measureColdStart(ctx, root, binDir, o.coldRuns, os.Stderr); err != nil {
			return fmt.Errorf("cold start: %w", err)
		}
	}
	if o.cluster != "" {
		if rep.cluster, err = measureCluster(ctx, root, binDir, o.cluster, o.clusterRuns, os.Stderr); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	rep.elapsed = time.Since(began)

	md := rep.markdown()
	fmt.Print(md)
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(md), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: wrote %s in %s\n", o.out, rep.elapsed.Round(time.Second))
	}
	return nil
}

// cell is one path at one concurrency.
type cell struct {
	path        path
	concurrency int
	result      queuebench.Result
}

// measurePaths loads every path at every concurrency. Within one
// concurrency the paths take turns, slice by slice, so a slow minute on
// a shared machine hits them all alike.
func measurePaths(ctx context.Context, o options, progress io.Writer) ([]cell, error) {
	p, err := startPaths()
	if err != nil {
		return nil, err
	}
	defer p.close()
	list := slices.DeleteFunc(slices.Clone(p.list), func(pa path) bool {
		return len(o.only) > 0 && !slices.Contains(o.only, pa.name)
	})
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	var cells []cell
	for _, c := range o.concurrency {
		runs := make([][]queuebench.Result, len(list))
		for range o.slices {
			for i, pa := range list {
				r, err := queuebench.Run(ctx, queuebench.LoadSpec{
					URL: pa.url, Host: pa.host, Concurrency: c,
					Duration: o.duration / time.Duration(o.slices), MaxRequests: o.maxRequests / o.slices, Warmup: o.warmup,
				})
				if err != nil {
					return nil, fmt.Errorf("%s: %w", pa.label, err)
				}
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				runs[i] = append(runs[i], r)
			}
		}
		for i, pa := range list {
			r := queuebench.Merge(runs[i])
			cells = append(cells, cell{path: pa, concurrency: c, result: r})
			fmt.Fprintf(progress, "c%-4d %-34s %s\n", c, pa.label, r)
		}
	}
	return cells, nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run the bench inside the knit module (make bench)")
	}
	return filepath.Dir(gomod), nil
}
