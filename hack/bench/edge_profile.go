package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// edgeProfileTime is how long -edge-profile profiles knit's edge under
// each load.
const edgeProfileTime = 5 * time.Second

// profileEdge loads knit's edge (fast path on) with the small GET at
// -queue-profile-c over each protocol while its CPU profile and then its
// allocations are taken from its pprof endpoint, into dir.
func profileEdge(ctx context.Context, o options, s *edgeSetup, progress io.Writer) error {
	var knit *edgeProxy
	for _, p := range s.proxies {
		if p.name == edgeKnit {
			knit = p
		}
	}
	if knit == nil || knit.pprof == "" {
		return fmt.Errorf("knit's edge serves no pprof endpoint")
	}
	if err := os.MkdirAll(o.edgeProfile, 0o755); err != nil {
		return err
	}
	for _, proto := range edgeProtocols {
		spec := queuebench.LoadSpec{URL: knit.proc.path.url, Host: edgeHost, Concurrency: o.profileC,
			Duration: edgeProfileTime + time.Second, MaxRequests: o.maxRequests}
		if proto != edgeH1 {
			spec.URL = "http://" + knit.tlsAddr + "/"
			spec.TLS, spec.HTTP2 = edgeTLS(proto), proto == edgeH2TLS
		}
		name := map[edgeProtocol]string{edgeH1: "h1", edgeH1TLS: "h1tls", edgeH2TLS: "h2tls"}[proto]
		done := make(chan error, 1)
		go func() {
			_, err := queuebench.Run(ctx, spec)
			done <- err
		}()
		cpuURL := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", knit.pprof, int(edgeProfileTime/time.Second))
		if err := fetchTo(ctx, cpuURL, filepath.Join(o.edgeProfile, "cpu-"+name+".pprof"), int(edgeProfileTime/time.Second)); err != nil {
			return err
		}
		if err := fetchTo(ctx, "http://"+knit.pprof+"/debug/pprof/allocs", filepath.Join(o.edgeProfile, "allocs-"+name+".pprof"), 0); err != nil {
			return err
		}
		if err := <-done; err != nil {
			return err
		}
		fmt.Fprintf(progress, "edge: profiled knit's edge, %s GET at c%d, into %s\n", proto, o.profileC, o.edgeProfile)
	}
	return nil
}
