package canary

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// ScrapeTimeout bounds each replica's GET: a queue-proxy answers /metrics
// from memory in milliseconds, so one that takes longer is not answering.
const ScrapeTimeout = 5 * time.Second

// maxMetricsBytes bounds a body: a queue-proxy's is tens of KiB (Go and
// process collectors included); anything near this is not one.
const maxMetricsBytes = 4 << 20

// Scrape reads the metrics of every replica at urls (their queue-proxies'
// http://<pod IP>:9091/metrics) and sums them. Every replica must answer:
// a missing one would make the canary's numbers look smaller or better
// than they are, so the error names each one that did not, and the caller
// decides whether to retry or wait. A nil c is a client without other
// settings; each GET is bounded by ScrapeTimeout within ctx.
func Scrape(ctx context.Context, c *http.Client, urls []string) (Snapshot, error) {
	each, err := ScrapeReplicas(ctx, c, urls)
	if err != nil {
		return Snapshot{}, err
	}
	snaps := make([]Snapshot, 0, len(urls))
	for _, u := range urls {
		snaps = append(snaps, each[u])
	}
	return Sum(snaps...), nil
}

// ScrapeReplicas is Scrape without the sum: each replica's Snapshot keyed
// by its URL, for DeltaReplicas to notice a replica that restarted during
// the window. The replicas are read concurrently.
func ScrapeReplicas(ctx context.Context, c *http.Client, urls []string) (map[string]Snapshot, error) {
	if c == nil {
		c = &http.Client{}
	}
	snaps := make([]Snapshot, len(urls))
	errs := make([]error, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() {
			s, err := scrapeOne(ctx, c, u)
			if err != nil {
				errs[i] = fmt.Errorf("scraping %s: %w", u, err)
			}
			snaps[i] = s
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make(map[string]Snapshot, len(urls))
	for i, u := range urls {
		out[u] = snaps[i]
	}
	return out, nil
}

func scrapeOne(ctx context.Context, c *http.Client, url string) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, ScrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Snapshot{}, err
	}
	// The text format, not OpenMetrics or protobuf, whatever the handler
	// would otherwise negotiate.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := c.Do(req)
	if err != nil {
		return Snapshot{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBytes+1))
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the body: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return Snapshot{}, fmt.Errorf("status %s: %s", resp.Status, bytes.TrimSpace(body[:min(len(body), 200)]))
	}
	if len(body) > maxMetricsBytes {
		return Snapshot{}, fmt.Errorf("body over %d bytes: not a queue-proxy's metrics", maxMetricsBytes)
	}
	return ParseMetrics(bytes.NewReader(body))
}
