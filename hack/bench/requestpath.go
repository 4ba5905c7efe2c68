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

// cell is one path at one concurrency for one request shape.
type cell struct {
	shape       queuebench.Shape
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
	// paths are the paths measured, and na why some did not carry a
	// shape beyond notCarried (checkShapes), for the cells left n/a.
	paths []path
	na    map[string]map[queuebench.Shape]string
	mem   []procMemory
	// build is how long building knit-queue and bareproxy took.
	build time.Duration
}

// measureRequestPath builds the proxy processes' binaries, starts every
// path, and loads each with every request shape it carries at the
// shape's concurrencies. Within one shape and concurrency the paths take
// turns, slice by slice, so a slow minute on a shared machine hits them
// all alike. It reads the proxy processes' memory before and after the
// load.
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
	rp.paths = list
	if rp.na, err = checkShapes(ctx, list, o.shapes); err != nil {
		return nil, err
	}

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
	for _, sr := range o.shapeRuns() {
		carriers := slices.DeleteFunc(slices.Clone(list), func(pa path) bool { return !carries(pa, sr.shape, rp.na) })
		for _, c := range sr.concurrency {
			cells, err := measureCells(ctx, o, sr, c, carriers, procOf)
			if err != nil {
				return nil, err
			}
			for _, cl := range cells {
				fmt.Fprintf(progress, "%-18s c%-4d %-44s %s\n", sr.shape.Label(), c, cl.path.label, cl.result)
			}
			rp.cells = append(rp.cells, cells...)
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

// measureCells loads every path in list with sr's shape at concurrency
// c, the paths taking turns slice by slice.
func measureCells(ctx context.Context, o options, sr shapeRun, c int, list []path, procOf map[string]*proxyProc) ([]cell, error) {
	runs := make([][]queuebench.Result, len(list))
	cpu := make([]time.Duration, len(list))
	for range o.slices {
		for i, pa := range list {
			spec := queuebench.LoadSpec{
				URL: pa.url, Host: pa.host, Shape: sr.shape, Concurrency: c,
				Duration: sr.duration / time.Duration(o.slices), MaxRequests: o.maxRequests / o.slices, Warmup: o.warmup,
			}
			if pr := procOf[pa.name]; pr != nil {
				spec.Measure = pr.cpuMeter(&cpu[i])
			}
			r, err := queuebench.Run(ctx, spec)
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", pa.label, sr.shape.Label(), err)
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			runs[i] = append(runs[i], r)
		}
	}
	cells := make([]cell, len(list))
	for i, pa := range list {
		cells[i] = cell{shape: sr.shape, path: pa, concurrency: c, result: queuebench.Merge(runs[i]), cpu: cpu[i]}
	}
	return cells, nil
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
