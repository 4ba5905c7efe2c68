// Command conformance runs Knative Serving's own conformance suite, the
// api/v1 and runtime packages of the release go.mod pins, and the e2e
// feature packages Knative's CI runs with config-features flags switched
// on (features.go), against a running knit, and writes what passed to
// docs/conformance.md.
//
// In knit dev (-mode dev) it starts `knit dev` itself and a registry on
// loopback, to which it pushes the suite's test images (Knative's
// test/test_images at the pinned release, built by make conformance), so
// knit dev pulls and runs real images as a cluster's kubelet does.
// Against the test cluster (-mode cluster) it runs on the cluster the
// kubeconfig names, with the test images pushed to its registry
// beforehand (make conformance-cluster).
//
// The run fails when a test fails that is not one of the mode's
// documented exceptions (exceptions.go), each of which says why.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// release is the Knative Serving release whose suite runs; go.mod pins it.
const release = "v0.42.2"

type options struct {
	mode          string
	knit, binDir  string
	kubeconfig    string
	ingress       string
	imageTemplate string
	images        string // mode dev: the test images' binaries
	imgbuild      string
	out, work     string
	run           string
	suites        string
	pvDir         string // mode cluster: the directory of the test claim's volume
	parallel      int
	timeout       time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.mode, "mode", "dev", "dev (start knit dev here) or cluster (the cluster -kubeconfig names)")
	flag.StringVar(&o.knit, "knit", "", "the knit binary (mode dev)")
	flag.StringVar(&o.binDir, "bin-dir", "", "where kube-apiserver and etcd are, for knit dev (mode dev)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "the cluster's kubeconfig (mode cluster)")
	flag.StringVar(&o.ingress, "ingress", "", "mode dev: knit dev's ingress address, a loopback port in the NodePort range; mode cluster: the node's IP")
	flag.StringVar(&o.imageTemplate, "image-template", "", "where the suite's images are: {{.Name}} is the image (mode cluster)")
	flag.StringVar(&o.images, "images", "", "directory of the suite's test image binaries, pushed to a registry on loopback (mode dev)")
	flag.StringVar(&o.imgbuild, "imgbuild", "", "the imgbuild binary that packs them (mode dev)")
	flag.StringVar(&o.out, "out", "", "docs/conformance.md to update; empty writes none")
	flag.StringVar(&o.work, "work", "", "directory for the test binaries, logs and knit dev's state (default: a temporary one)")
	flag.StringVar(&o.run, "run", "", "only the tests this -test.run pattern picks (the report is then not written)")
	flag.StringVar(&o.suites, "suites", defaultSuites, "the packages to run, comma-separated: api/v1, api/v1beta1, runtime, e2e/initcontainers, e2e/multicontainerprobing, e2e/pvc, e2e/securedefaults, e2e/tagheader, e2e (the tests of test/e2e features.go picks), or the groups conformance and features (the report is rewritten for these packages only)")
	flag.StringVar(&o.pvDir, "pv-dir", "", "mode cluster: the node's directory for the PersistentVolume of e2e/pvc's claim (made here, for the test images' user)")
	flag.IntVar(&o.parallel, "parallel", 4, "tests run at once within each package")
	flag.DurationVar(&o.timeout, "timeout", 40*time.Minute, "limit of each package's run")
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) (err error) {
	if o.work == "" {
		dir, mkErr := os.MkdirTemp("", "knit-conformance-")
		if mkErr != nil {
			return mkErr
		}
		// Kept when something failed: the suite's and knit dev's logs.
		defer func() {
			if err != nil {
				fmt.Fprintf(os.Stderr, "conformance: logs kept in %s\n", dir)
				return
			}
			os.RemoveAll(dir)
		}()
		o.work = dir
	}
	// knit dev's state dir is under work: its own files, which its
	// replicas, each in its image's root, never see.
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(o.work, 0o755); err != nil {
		return err
	}
	o.work, _ = filepath.Abs(o.work)
	pkgs, err := resolvePackages(o.suites)
	if err != nil {
		return err
	}
	if o.mode == "cluster" && o.pvDir == "" && slices.ContainsFunc(pkgs, func(p testPackage) bool { return p.claim }) {
		return errors.New("mode cluster runs e2e/pvc: -pv-dir names the directory of its claim's volume")
	}
	bins, err := buildSuites(ctx, o.work, pkgs)
	if err != nil {
		return err
	}
	target, err := startTarget(ctx, o)
	if err != nil {
		return err
	}
	defer target.stop()
	cl, err := prepare(ctx, target)
	if err != nil {
		return err
	}
	var results []result
	var ran []string
	for _, s := range bins {
		rs, err := runPackage(ctx, o, target, cl, s)
		if err != nil {
			return err
		}
		results = append(results, rs...)
		ran = append(ran, s.pkg.name)
	}
	verdict := judge(o.mode, results)
	fmt.Print(verdict.summary())
	if o.out != "" && o.run == "" {
		if err := writeReport(o.out, o.mode, ran, results, time.Now()); err != nil {
			return err
		}
	}
	return verdict.err()
}

// runPackage runs one package; a feature package as Knative's CI runs it,
// with its flags switched on around the run (and its claim made first).
func runPackage(ctx context.Context, o options, t *target, cl clients, s suite) ([]result, error) {
	if !s.pkg.feature() || len(s.pkg.flags) == 0 {
		return runSuite(ctx, o, t, s)
	}
	var results []result
	err := withFeatures(ctx, cl, t.image("helloworld"), s.pkg, func() error {
		if s.pkg.claim {
			pvDir := ""
			if o.mode == "cluster" {
				pvDir = o.pvDir
			}
			if err := ensureClaim(ctx, cl.kube, pvDir); err != nil {
				return err
			}
		}
		var err error
		results, err = runSuite(ctx, o, t, s)
		return err
	})
	return results, err
}
