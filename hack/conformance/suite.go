package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// testPackage is one of Knative Serving's test packages the harness runs.
type testPackage struct {
	// name is how -suites and the report name it: "api/v1" and "runtime"
	// (test/conformance/...), "e2e/pvc" (test/e2e/pvc).
	name string
	// flags are the config-features flags Knative's CI switches to
	// Enabled before it runs a feature package and back afterwards
	// (test/e2e-tests.sh); none for a conformance package.
	flags []string
	// alpha runs it with the suite flag --enable-alpha: its tests skip
	// without it.
	alpha bool
	// claim: its tests mount Knative's test PersistentVolumeClaim, which
	// Knative's CI creates beforehand (claim.go).
	claim bool
	// probe is how admission shows whether flags are in force (features.go).
	probe *probe
	// settle replaces the settle wait for flags no probe reads; 0 keeps
	// Knative CI's.
	settle time.Duration
	// tests, when set, is the -test.run pattern of a package knit runs
	// only part of (test/e2e, whose tests cover every feature).
	tests string
}

// importPath is the Go package of p's tests.
func (p testPackage) importPath() string {
	if p.feature() {
		return "knative.dev/serving/test/" + p.name
	}
	return "knative.dev/serving/test/conformance/" + p.name
}

// feature says whether p is one of the e2e feature packages.
func (p testPackage) feature() bool { return isFeature(p.name) }

// isFeature says whether a package name is an e2e package's: a feature
// package, or test/e2e itself.
func isFeature(name string) bool { return name == "e2e" || strings.HasPrefix(name, "e2e/") }

// conformancePackages are the packages Knative certifies an
// implementation with.
var conformancePackages = []testPackage{{name: "api/v1"}, {name: "api/v1beta1"}, {name: "runtime"}}

// packageGroups are the names -suites takes for several packages at once;
// its default runs both, the conformance packages first, as Knative's CI
// runs them before the feature packages.
var packageGroups = map[string][]testPackage{
	"conformance": conformancePackages,
	"features":    featurePackages,
}

const defaultSuites = "conformance,features"

// resolvePackages reads -suites: package names and group names, separated
// by commas. The packages come back once each, in the order of
// conformancePackages then featurePackages, whatever order they were named
// in, so a feature package's flags are never on while a conformance
// package runs.
func resolvePackages(spec string) ([]testPackage, error) {
	all := append(slices.Clone(conformancePackages), featurePackages...)
	want := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if group, ok := packageGroups[name]; ok {
			for _, p := range group {
				want[p.name] = true
			}
			continue
		}
		if !slices.ContainsFunc(all, func(p testPackage) bool { return p.name == name }) {
			var names []string
			for _, p := range all {
				names = append(names, p.name)
			}
			return nil, fmt.Errorf("-suites: %q is neither a package (%s) nor a group (conformance, features)", name, strings.Join(names, ", "))
		}
		want[name] = true
	}
	var out []testPackage
	for _, p := range all {
		if want[p.name] {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("-suites names no package")
	}
	return out, nil
}

// suite is one package built into a test binary.
type suite struct {
	pkg testPackage
	bin string
}

// buildSuites compiles each package's tests (build tag e2e, as Knative's
// CI builds them) into dir.
func buildSuites(ctx context.Context, dir string, pkgs []testPackage) ([]suite, error) {
	var out []suite
	for _, p := range pkgs {
		bin := filepath.Join(dir, strings.ReplaceAll(p.name, "/", "-")+".test")
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-tags", "e2e", "-o", bin, p.importPath())
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go test -c %s: %v\n%s", p.importPath(), err, msg)
		}
		out = append(out, suite{pkg: p, bin: bin})
	}
	return out, nil
}

// result is one test's outcome, a subtest's included ("TestX/case").
type result struct {
	suite, test string
	outcome     string // PASS, FAIL or SKIP
	elapsed     time.Duration
}

// resultLine is how `go test -v` reports a test's end.
var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(([0-9.]+)s\)`)

// runSuite runs one package against the target with the suite's own
// flags, its output to <work>/<package>.log, and returns every result.
func runSuite(ctx context.Context, o options, t *target, s suite) ([]result, error) {
	args := []string{
		"-test.v", "-test.count=1",
		"-test.parallel=" + strconv.Itoa(o.parallel), "-test.timeout=" + o.timeout.String(),
		"--kubeconfig=" + t.kubeconfig,
		"--ingressendpoint=" + t.endpoint,
		"--imagetemplate=" + t.imageTemplate,
		"--disable-logstream",
		"--enable-beta", // knit serves the beta features the suite tests: several containers, emptyDir
		"--spooftimeout=2m",
	}
	if s.pkg.alpha {
		args = append(args, "--enable-alpha")
	}
	switch {
	case o.run != "":
		args = append(args, "-test.run="+o.run)
	case s.pkg.tests != "":
		args = append(args, "-test.run="+s.pkg.tests)
	}
	cmd := exec.CommandContext(ctx, s.bin, args...)
	// SYSTEM_NAMESPACE is where the tests look for the system's
	// ConfigMaps and the activator's Service, as Knative's CI points it
	// at knative-serving: knit keeps them in knit-system.
	cmd.Env = append(os.Environ(), "GATEWAY_OVERRIDE="+t.gatewayName, "GATEWAY_NAMESPACE_OVERRIDE="+t.gatewayNS,
		"SYSTEM_NAMESPACE="+systemNamespace)
	logPath := filepath.Join(o.work, strings.ReplaceAll(s.pkg.name, "/", "-")+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	slog.Info("Running the suite", "package", s.pkg.name, "alpha", s.pkg.alpha, "log", logPath)
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	results := parseResults(s.pkg.name, io.TeeReader(stdout, logFile))
	err = cmd.Wait()
	slog.Info("Ran the suite", "package", s.pkg.name, "results", len(results), "duration", time.Since(began).Round(time.Second), "exit", err)
	if len(results) == 0 {
		return nil, fmt.Errorf("%s: no test ran (%v); see %s", s.pkg.name, err, logPath)
	}
	return results, nil
}

// timedOut is the panic `go test` ends a run with when -test.timeout
// passes; the tests then running follow it, one a line, indented, and
// never get a result line of their own.
var (
	timedOut       = regexp.MustCompile(`^panic: test timed out after (\S+)`)
	runningTest    = regexp.MustCompile(`^\s+(Test\S+) \([0-9.a-zµ]+\)$`)
	runningTestsOn = "running tests:"
)

// parseResults reads `go test -v` output for test results. A test still
// running when the package's -test.timeout passed counts as failed, as
// `go test` counts it, so the report lists it rather than losing it.
func parseResults(pkgName string, r io.Reader) []result {
	var out []result
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	timeout, running := false, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case timedOut.MatchString(line):
			timeout = true
			continue
		case timeout && strings.TrimSpace(line) == runningTestsOn:
			running = true
			continue
		case running:
			m := runningTest.FindStringSubmatch(line)
			if m == nil {
				running = false
				continue
			}
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, result{suite: pkgName, test: m[1], outcome: "FAIL"})
			}
			continue
		}
		m := resultLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		secs, _ := strconv.ParseFloat(m[3], 64)
		seen[m[2]] = true
		out = append(out, result{suite: pkgName, test: m[2], outcome: m[1], elapsed: time.Duration(secs * float64(time.Second))})
	}
	return out
}
