package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// options are the bench's flags; the defaults are what `make bench` runs.
type options struct {
	duration    time.Duration
	slices      int
	warmup      time.Duration
	maxRequests int
	concurrency []int
	// shapes are the request shapes measured; the ones beyond GET run
	// at shapeConcurrency for shapeDuration per cell.
	shapes           []queuebench.Shape
	shapeConcurrency []int
	shapeDuration    time.Duration
	only             []string
	coldRuns         int
	pullRuns         int
	dockerfileRuns   int
	cluster          string // kubeconfig of the test cluster; empty skips the cluster part
	clusterRuns      int
	binDir           string
	out              string
	cpuProfile       string
	// knativeQueue is Knative's queue-proxy binary; empty skips its paths.
	knativeQueue string
	// queueProfile is where -queue-profile writes; profileC and
	// profileCC are the concurrency and containerConcurrency it profiles.
	queueProfile        string
	profileC, profileCC int
	// scale runs the scale part alone (make bench-scale) and writes its
	// section into out.
	scale     bool
	scaleOpts scaleOptions
	// parts are the parts -only selects; empty runs them all.
	parts []string
	// edgeDuration and edgeConcurrency are the edge part's time per cell
	// and concurrencies.
	edgeDuration    time.Duration
	edgeConcurrency []int
	// edgeProfile is where -edge-profile writes knit's edge's profiles.
	edgeProfile string
	// clusterDockerfileRuns are the code changes of the cluster's
	// dockerfile:// part after its first push.
	clusterDockerfileRuns int
}

// The parts of a run, as -only names them.
const (
	partRequest    = "request"
	partEdge       = "edge"
	partCold       = "cold"
	partDockerfile = "dockerfile"
	partPull       = "pull"
	partCluster    = "cluster"
)

var partNames = []string{partRequest, partEdge, partCold, partDockerfile, partPull, partCluster}

// runs reports whether -only selects part.
func (o options) runs(part string) bool {
	return len(o.parts) == 0 || slices.Contains(o.parts, part)
}

// measures reports whether the path named name is measured (-paths).
func (o options) measures(name string) bool {
	return len(o.only) == 0 || slices.Contains(o.only, name)
}

func parseFlags() (options, error) {
	o := options{}
	conc := flag.String("concurrency", "1,10,100", "comma-separated closed-loop concurrencies of the GET shape")
	shapes := flag.String("shapes", strings.Join(shapeNames(), ","), "comma-separated request shapes to measure")
	shapeConc := flag.String("shape-concurrency", "1,10", "comma-separated closed-loop concurrencies of the shapes beyond GET")
	flag.DurationVar(&o.shapeDuration, "shape-duration", 0, "measured time per path and concurrency of the shapes beyond GET (default a third of -duration)")
	only := flag.String("paths", "", "comma-separated path names to measure (default all): "+strings.Join(pathNames(), ","))
	flag.DurationVar(&o.duration, "duration", 3*time.Second, "measured time per path and concurrency")
	flag.IntVar(&o.slices, "slices", 3, "slices each cell's time is cut into; paths take turns slice by slice so drift hits them alike")
	flag.DurationVar(&o.warmup, "warmup", 100*time.Millisecond, "unmeasured load before each slice")
	flag.IntVar(&o.maxRequests, "max-requests", 1_000_000, "requests per path and concurrency at most")
	flag.IntVar(&o.coldRuns, "cold-runs", 11, "cold starts to time in knit dev, of the ko:// Revision and of the image one each (0 skips the cold-start part); the targets judge their medians, and single starts spread widely on a shared machine")
	flag.IntVar(&o.dockerfileRuns, "dockerfile-runs", 3, "code changes of examples/python-hello (dockerfile://) to time push → serving in knit dev, after its first, cold build (0 skips the dockerfile:// part)")
	flag.IntVar(&o.pullRuns, "pull-runs", 3, "first pulls of a 50 MiB image from a loopback registry by knit's image store and by crane, each (0 skips the pull part)")
	flag.StringVar(&o.cluster, "cluster-kubeconfig", "", "kubeconfig of the test cluster (make cluster) to install knit on and time real pods; empty skips it")
	flag.IntVar(&o.clusterRuns, "cluster-runs", 5, "cold starts and plain pod starts to time on the cluster")
	flag.IntVar(&o.clusterDockerfileRuns, "cluster-dockerfile-runs", 3, "code changes of examples/python-hello (dockerfile://) to time push → serving on the cluster, built in a Job, after its first push (0 skips it)")
	flag.StringVar(&o.binDir, "bin-dir", "bin", "where `make tools` put kube-apiserver, etcd and kubectl")
	flag.StringVar(&o.out, "out", "docs/benchmarks.md", "markdown report to write (empty: print only)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the request-path part (the in-process proxies and load generator) here")
	flag.StringVar(&o.knativeQueue, "knative-queue", "", "Knative's queue-proxy binary (make knative-queue); default <bin-dir>/knative-queue, \"off\" skips its paths")
	flag.StringVar(&o.queueProfile, "queue-profile", "", "after the measurement, profile one more knit-queue process under load and write its CPU and allocation profiles to this directory")
	flag.IntVar(&o.profileC, "queue-profile-c", 10, "the concurrency of -queue-profile's load")
	flag.IntVar(&o.profileCC, "queue-profile-cc", 0, "the containerConcurrency of -queue-profile's knit-queue")
	flag.BoolVar(&o.scale, "scale", false, "run the scale part alone (a thousand Services in knit dev, make bench-scale) and write its section into -out")
	flag.IntVar(&o.scaleOpts.services, "scale-services", 1000, "Services the scale part applies at once, at initial scale 0")
	flag.IntVar(&o.scaleOpts.warm, "scale-warm", 200, "Services the scale part applies at once at initial scale 1 (a replica each)")
	flag.IntVar(&o.scaleOpts.repo, "scale-repo", 100, "Services in the repository the scale part pushes")
	flag.DurationVar(&o.scaleOpts.idle, "scale-idle", 30*time.Second, "how long the scale part measures knit dev idle")
	onlyParts := flag.String("only", "", "comma-separated parts to run (default all): "+strings.Join(partNames, ",")+
		"; without request, each part's section is put into -out in place of its last one")
	flag.DurationVar(&o.edgeDuration, "edge-duration", 2*time.Second, "measured time per proxy, protocol, shape and concurrency of the edge part")
	edgeConc := flag.String("edge-concurrency", "10,100", "comma-separated closed-loop concurrencies of the edge part")
	flag.StringVar(&o.edgeProfile, "edge-profile", "", "after the edge part, profile knit's edge under the GET load at -queue-profile-c over each protocol and write its CPU and allocation profiles to this directory")
	flag.Parse()
	var err error
	if *onlyParts != "" {
		for _, name := range strings.Split(*onlyParts, ",") {
			if !slices.Contains(partNames, name) {
				return o, fmt.Errorf("-only: unknown part %q (have %s)", name, strings.Join(partNames, ","))
			}
			o.parts = append(o.parts, name)
		}
	}
	if o.edgeConcurrency, err = parseConcurrency("-edge-concurrency", *edgeConc); err != nil {
		return o, err
	}
	if o.concurrency, err = parseConcurrency("-concurrency", *conc); err != nil {
		return o, err
	}
	if o.shapeConcurrency, err = parseConcurrency("-shape-concurrency", *shapeConc); err != nil {
		return o, err
	}
	if o.shapes, err = parseShapes(*shapes); err != nil {
		return o, err
	}
	if o.shapeDuration == 0 {
		o.shapeDuration = o.duration / 3
	}
	if *only != "" {
		for _, name := range strings.Split(*only, ",") {
			if !slices.Contains(pathNames(), name) {
				return o, fmt.Errorf("-paths: unknown path %q (have %s)", name, strings.Join(pathNames(), ","))
			}
			o.only = append(o.only, name)
		}
	}
	if err := o.resolveKnativeQueue(); err != nil {
		return o, err
	}
	if o.edgeDuration <= 0 {
		return o, fmt.Errorf("-edge-duration must be positive")
	}
	if o.slices < 1 || o.duration <= 0 || o.shapeDuration <= 0 || o.maxRequests < o.slices || o.coldRuns < 0 || o.pullRuns < 0 || o.dockerfileRuns < 0 || o.clusterDockerfileRuns < 0 {
		return o, fmt.Errorf("-slices, -duration, -shape-duration and -max-requests must be positive, -cold-runs, -pull-runs, -dockerfile-runs and -cluster-dockerfile-runs not negative")
	}
	return o, nil
}

// resolveKnativeQueue makes -knative-queue an absolute path that
// exists, or empty for "off"; a run without the request-path part, the
// only one that uses it, needs none.
func (o *options) resolveKnativeQueue() error {
	switch o.knativeQueue {
	case "off":
		o.knativeQueue = ""
		return nil
	case "":
		if !o.runs(partRequest) {
			return nil
		}
		o.knativeQueue = filepath.Join(o.binDir, "knative-queue")
	}
	if _, err := os.Stat(o.knativeQueue); err != nil {
		return fmt.Errorf("-knative-queue: %w (make knative-queue builds it; -knative-queue off skips Knative's paths)", err)
	}
	abs, err := filepath.Abs(o.knativeQueue)
	if err != nil {
		return err
	}
	o.knativeQueue = abs
	return nil
}

// parseConcurrency reads a flag's comma-separated positive integers.
func parseConcurrency(name, list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: want positive integers", name, list)
		}
		out = append(out, n)
	}
	return out, nil
}

func pathNames() []string {
	return []string{
		queuebench.Direct, queuebench.ReverseProxy, queuebench.ReverseProxyPooled, queuebench.QueueCC0, queuebench.QueueCC10,
		pathIngressQueue, pathIngressActivator,
		pathProcBare, pathProcKnitCC0, pathProcKnitCC0NoFast, pathProcKnativeCC0, pathProcKnitCC10, pathProcKnativeCC10,
	}
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
	ctrllog.SetLogger(logr.Discard()) // the API clients' own logging has nothing to say here
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	binDir, err := filepath.Abs(o.binDir)
	if err != nil {
		return err
	}
	if o.scale {
		return runScale(ctx, o, root, binDir, began)
	}
	if !o.runs(partRequest) {
		return runSections(ctx, o, root, binDir, began)
	}
	rep := &report{machine: readMachine(root), opts: o}

	if rep.request, err = measureRequestPath(ctx, root, o, os.Stderr); err != nil {
		return err
	}
	if o.runs(partEdge) {
		if rep.edge, err = measureEdge(ctx, root, o, os.Stderr); err != nil {
			return fmt.Errorf("edge: %w", err)
		}
		rep.edge.machine = rep.machine
	}
	if o.coldRuns > 0 && o.runs(partCold) {
		if rep.cold, err = measureColdStart(ctx, root, binDir, o.coldRuns, os.Stderr); err != nil {
			return fmt.Errorf("cold start: %w", err)
		}
	}
	if o.dockerfileRuns > 0 && o.runs(partDockerfile) {
		if rep.dockerfile, err = measureDockerfile(ctx, root, binDir, o.dockerfileRuns, os.Stderr); err != nil {
			return fmt.Errorf("dockerfile: %w", err)
		}
	}
	if o.pullRuns > 0 && o.runs(partPull) {
		if rep.pull, err = measurePull(ctx, o.pullRuns, os.Stderr); err != nil {
			return fmt.Errorf("pull: %w", err)
		}
	}
	if o.cluster != "" && o.runs(partCluster) {
		if rep.cluster, err = measureCluster(ctx, root, binDir, o.cluster, o.clusterRuns, o.clusterDockerfileRuns, os.Stderr); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	if old, err := os.ReadFile(o.out); o.out != "" && err == nil {
		if rep.cluster == nil {
			// Keep the last cluster measurement rather than drop it.
			rep.carriedCluster = carriedCluster(string(old))
		}
		rep.carriedScale = carriedScale(string(old))
		if rep.edge == nil {
			rep.carriedEdge = carriedSection(string(old), edgeHeading)
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

// runScale is make bench-scale: the scale part alone, its section put
// into the page at o.out in place of the last one.
func runScale(ctx context.Context, o options, root, binDir string, began time.Time) error {
	res, err := measureScale(ctx, root, binDir, o.scaleOpts, os.Stderr)
	if err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	section := res.markdown(readMachine(root), time.Since(began))
	fmt.Print(section)
	if o.out == "" {
		return nil
	}
	old, err := os.ReadFile(o.out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.WriteFile(o.out, []byte(spliceSection(string(old), section)), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote the scale section of %s in %s\n", o.out, time.Since(began).Round(time.Second))
	return nil
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
