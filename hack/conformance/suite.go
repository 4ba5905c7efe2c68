package main

import (
	"bufio"
	"context"
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

// suite is one conformance package, built into a test binary.
type suite struct {
	name string // "api/v1" or "runtime"
	bin  string
}

// suitePackages are the packages Knative certifies an implementation with.
var suitePackages = []string{"api/v1", "runtime"}

// buildSuites compiles each package's tests (build tag e2e) into dir.
func buildSuites(ctx context.Context, dir string, names []string) ([]suite, error) {
	var out []suite
	for _, name := range names {
		if !slices.Contains(suitePackages, name) {
			return nil, fmt.Errorf("%q is not a conformance package (%s)", name, strings.Join(suitePackages, ", "))
		}
		bin := filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+".test")
		pkg := "knative.dev/serving/test/conformance/" + name
		cmd := exec.CommandContext(ctx, "go", "test", "-c", "-tags", "e2e", "-o", bin, pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go test -c %s: %v\n%s", pkg, err, msg)
		}
		out = append(out, suite{name: name, bin: bin})
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
// flags, its output to <work>/<suite>.log, and returns every result.
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
	if o.run != "" {
		args = append(args, "-test.run="+o.run)
	}
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = append(os.Environ(), "GATEWAY_OVERRIDE="+t.gatewayName, "GATEWAY_NAMESPACE_OVERRIDE="+t.gatewayNS)
	logPath := filepath.Join(o.work, strings.ReplaceAll(s.name, "/", "-")+".log")
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
	slog.Info("Running the conformance suite", "package", s.name, "log", logPath)
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	results := parseResults(s.name, io.TeeReader(stdout, logFile))
	err = cmd.Wait()
	slog.Info("Ran the conformance suite", "package", s.name, "results", len(results), "duration", time.Since(began).Round(time.Second), "exit", err)
	if len(results) == 0 {
		return nil, fmt.Errorf("%s: no test ran (%v); see %s", s.name, err, logPath)
	}
	return results, nil
}

// parseResults reads `go test -v` output for test results.
func parseResults(suiteName string, r io.Reader) []result {
	var out []result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		secs, _ := strconv.ParseFloat(m[3], 64)
		out = append(out, result{suite: suiteName, test: m[2], outcome: m[1], elapsed: time.Duration(secs * float64(time.Second))})
	}
	return out
}
