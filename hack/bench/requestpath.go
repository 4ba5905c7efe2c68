package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// cell is one path at one concurrency.
type cell struct {
	path        path
	concurrency int
	result      queuebench.Result
	// cpu is the CPU time a proxy process spent on the measured
	// requests; 0 for paths in the bench's process.
	cpu time.Duration
}

// requestPath is what the request-path part measured.
type requestPath struct {
	cells []cell
	mem   []procMemory
	// build is how long building knit-queue and bareproxy took.
	build time.Duration
}

// measureRequestPath builds the proxy processes' binaries, starts every
// path, and loads each at every concurrency. Within one concurrency the
// paths take turns, slice by slice, so a slow minute on a shared machine
// hits them all alike. It reads the proxy processes' memory before and
// after the load.
func measureRequestPath(ctx context.Context, root string, o options, progress io.Writer) (*requestPath, error) {
	tmp, err := os.MkdirTemp("", "knit-bench-proxies-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	rp := &requestPath{}
	began := time.Now()
	knitQueue, bareProxy, err := buildProxies(ctx, root, tmp)
	if err != nil {
		return nil, err
	}
	rp.build = time.Since(began)

	p, err := startPaths()
	if err != nil {
		return nil, err
	}
	defer p.close()
	appURL := p.list[0].url // queuebench lists the app first
	specs, err := procSpecs(bareProxy, knitQueue, o.knativeQueue, appURL)
	if err != nil {
		return nil, err
	}
	specs = slices.DeleteFunc(specs, func(pr *proxyProc) bool { return !o.measures(pr.path.name) })
	if rp.mem, err = startProcs(ctx, specs, tmp); err != nil {
		return nil, err
	}
	p.procs = specs
	for _, pr := range specs {
		p.list = append(p.list, pr.path)
	}
	list := slices.DeleteFunc(slices.Clone(p.list), func(pa path) bool { return !o.measures(pa.name) })

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
	procOf := map[string]*proxyProc{}
	for _, pr := range specs {
		procOf[pr.path.name] = pr
	}
	for _, c := range o.concurrency {
		runs := make([][]queuebench.Result, len(list))
		cpu := make([]time.Duration, len(list))
		for range o.slices {
			for i, pa := range list {
				spec := queuebench.LoadSpec{
					URL: pa.url, Host: pa.host, Concurrency: c,
					Duration: o.duration / time.Duration(o.slices), MaxRequests: o.maxRequests / o.slices, Warmup: o.warmup,
				}
				if pr := procOf[pa.name]; pr != nil {
					spec.Measure = pr.cpuMeter(&cpu[i])
				}
				r, err := queuebench.Run(ctx, spec)
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
			rp.cells = append(rp.cells, cell{path: pa, concurrency: c, result: r, cpu: cpu[i]})
			fmt.Fprintf(progress, "c%-4d %-44s %s\n", c, pa.label, r)
		}
	}
	if rp.mem, err = readProcsMemory(ctx, specs, rp.mem); err != nil {
		return nil, err
	}
	if o.queueProfile != "" {
		if err := profileKnitQueue(ctx, knitQueue, appURL, tmp, o, progress); err != nil {
			return nil, fmt.Errorf("profiling knit-queue: %w", err)
		}
	}
	return rp, nil
}

// buildProxies builds knit-queue the way `make images` builds its image's
// binary (static, -trimpath, -s -w) and bareproxy the same way, into dir.
func buildProxies(ctx context.Context, root, dir string) (knitQueue, bareProxy string, err error) {
	cmd := goCmd(ctx, root, "build", "-trimpath", "-ldflags", "-s -w", "-o", dir+string(filepath.Separator), "./cmd/knit-queue", "./hack/bench/bareproxy")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build ./cmd/knit-queue ./hack/bench/bareproxy: %v\n%s", err, out)
	}
	return filepath.Join(dir, "knit-queue"), filepath.Join(dir, "bareproxy"), nil
}
