package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// profileKnitQueue starts one more knit-queue process at
// containerConcurrency o.profileCC, with profiling on (the measured ones
// run without), loads it at concurrency o.profileC for the cell duration
// and writes its CPU profile
// over that load and its allocation profile to knit-queue.cpu.pprof and
// knit-queue.allocs.pprof in o.queueProfile. Read them with
// `go tool pprof -top <binary> <profile>`; the binary is copied beside
// them as knit-queue.
func profileKnitQueue(ctx context.Context, knitQueue, appURL, tmp string, o options, progress io.Writer) error {
	if err := os.MkdirAll(o.queueProfile, 0o755); err != nil {
		return err
	}
	_, appPort, err := net.SplitHostPort(strings.TrimPrefix(appURL, "http://"))
	if err != nil {
		return err
	}
	env, addr, err := queueEnv(appPort, o.profileCC)
	if err != nil {
		return err
	}
	admin, err := freeAddr()
	if err != nil {
		return err
	}
	_, adminPort, _ := net.SplitHostPort(admin)
	env = append(env, "ENABLE_PROFILING=true", "QUEUE_ADMIN_PORT="+adminPort) // later entries win
	pr := &proxyProc{
		path:  path{name: "profiled-knit", label: fmt.Sprintf("knit-queue, cc=%d, profiled", o.profileCC), url: "http://" + addr},
		bin:   knitQueue,
		probe: http.Header{"K-Network-Probe": {"queue"}},
	}
	pr.cmd = execCommand(knitQueue, env)
	if err := pr.start(ctx, tmp); err != nil {
		return err
	}
	defer pr.stop()

	seconds := max(1, int(o.duration/time.Second))
	load := make(chan error, 1)
	go func() {
		r, err := queuebench.Run(ctx, queuebench.LoadSpec{
			URL: pr.path.url, Concurrency: o.profileC, Warmup: o.warmup,
			Duration: time.Duration(seconds)*time.Second + 500*time.Millisecond, MaxRequests: o.maxRequests,
		})
		if err == nil {
			fmt.Fprintf(progress, "c%-4d %-44s %s\n", o.profileC, pr.path.label, r)
		}
		load <- err
	}()
	base := "http://" + admin + "/debug/pprof/"
	cpuErr := fetchTo(ctx, base+fmt.Sprintf("profile?seconds=%d", seconds), filepath.Join(o.queueProfile, "knit-queue.cpu.pprof"), seconds)
	if err := <-load; err != nil {
		return err
	}
	if cpuErr != nil {
		return cpuErr
	}
	if err := fetchTo(ctx, base+"allocs", filepath.Join(o.queueProfile, "knit-queue.allocs.pprof"), 0); err != nil {
		return err
	}
	bin, err := os.ReadFile(knitQueue)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.queueProfile, "knit-queue"), bin, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(progress, "bench: knit-queue profiles in %s\n", o.queueProfile)
	return nil
}

// fetchTo GETs url into file, allowing the answer seconds beyond a
// minute.
func fetchTo(ctx context.Context, url, file string, seconds int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute+time.Duration(seconds)*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s %s", url, resp.Status, body)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
