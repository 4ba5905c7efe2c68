package queuebench

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxRequests bounds one load run when LoadSpec leaves it 0.
const DefaultMaxRequests = 2_000_000

// stuckGrace is how long past its duration a run waits for a request
// in flight before its connection's deadline cuts it off.
const stuckGrace = 10 * time.Second

// LoadSpec is one closed-loop load run: Concurrency workers, each with
// its own kept-alive connection, send the same request back to back
// until Duration passes or MaxRequests were sent, whichever comes first.
type LoadSpec struct {
	// URL is where App is reached; a Shape other than ShapeGet replaces
	// its path with the shape's.
	URL string
	// Shape is the request sent and the answer wanted; empty is ShapeGet.
	Shape Shape
	// Host is the Host header; empty means the URL's host.
	Host string
	// Header is added to every request.
	Header      http.Header
	Concurrency int
	Duration    time.Duration
	// MaxRequests bounds the requests sent; 0 means DefaultMaxRequests.
	MaxRequests int
	// Warmup is an unmeasured run before the measured one, which opens
	// every connection and fills the proxies' pools.
	Warmup time.Duration
	// TLS, when set, sends the shape's requests over TLS with this
	// configuration: HTTP/1.1, or HTTP/2 with HTTP2 set. The URL stays
	// http://: only the connection changes. Not with ShapeH2C.
	TLS   *tls.Config
	HTTP2 bool
	// Measure, when set, is called with true just before the measured
	// run and with false just after it, so a caller can read counters
	// (a proxy's CPU time) over exactly the measured requests.
	Measure func(start bool)
}

// Result is one load run.
type Result struct {
	Requests, Errors int
	Elapsed          time.Duration
	RequestsPerSec   float64
	P50, P90, P99    time.Duration
	FirstErr         error
	// Bounded is set when the run stopped at MaxRequests, not Duration.
	Bounded bool

	latencies []time.Duration // sorted
}

func (r Result) String() string {
	return fmt.Sprintf("%8.0f req/s  p50 %-9v p90 %-9v p99 %-9v (%d requests, %d errors)",
		r.RequestsPerSec, r.P50, r.P90, r.P99, r.Requests, r.Errors)
}

// Run runs spec; the error is for a spec that cannot run, request
// failures are counted in the Result.
func Run(ctx context.Context, spec LoadSpec) (Result, error) {
	if spec.Concurrency < 1 || spec.Duration <= 0 {
		return Result{}, fmt.Errorf("load: concurrency %d and duration %v must be positive", spec.Concurrency, spec.Duration)
	}
	limit := spec.MaxRequests
	if limit <= 0 {
		limit = DefaultMaxRequests
	}
	deadline := time.Now().Add(spec.Warmup + spec.Duration + stuckGrace)
	conns, release, err := workerConns(spec, deadline)
	if err != nil {
		return Result{}, err
	}
	defer release()
	if spec.Warmup > 0 {
		run(ctx, conns, spec.Warmup, limit, false)
	}
	if spec.Measure != nil {
		spec.Measure(true)
	}
	r := run(ctx, conns, spec.Duration, limit, true)
	if spec.Measure != nil {
		spec.Measure(false)
	}
	return r, nil
}

// worker is one load worker's connection: Conn or H2CConn.
type worker interface{ Do() error }

// workerConns are spec.Concurrency connections for spec's shape, and
// what closes them.
func workerConns(spec LoadSpec, deadline time.Time) ([]worker, func(), error) {
	conns := make([]worker, spec.Concurrency)
	if spec.TLS != nil && spec.HTTP2 {
		return h2TLSWorkers(spec, deadline)
	}
	if spec.Shape == ShapeH2C {
		h2c := make([]*H2CConn, spec.Concurrency)
		release := func() {
			for _, c := range h2c {
				if c != nil {
					c.release()
				}
			}
		}
		for i := range conns {
			c, err := NewH2CConn(spec.URL, spec.Host, spec.Header, deadline)
			if err != nil {
				release()
				return nil, nil, err
			}
			h2c[i], conns[i] = c, c
		}
		return conns, release, nil
	}
	shape := spec.Shape
	if shape == "" {
		shape = ShapeGet
	}
	req, err := NewShapeRequest(shape, spec.URL, spec.Host, spec.Header)
	if err != nil {
		return nil, nil, err
	}
	h1 := make([]*Conn, spec.Concurrency)
	for i := range conns {
		h1[i] = NewConn(req, deadline)
		if spec.TLS != nil {
			h1[i] = NewTLSConn(req, deadline, spec.TLS)
		}
		conns[i] = h1[i]
	}
	return conns, func() {
		for _, c := range h1 {
			c.Close()
		}
	}, nil
}

// run drives one worker per connection for d or limit requests.
func run(ctx context.Context, conns []worker, d time.Duration, limit int, measure bool) Result {
	var stop atomic.Bool
	timer := time.AfterFunc(d, func() { stop.Store(true) })
	defer timer.Stop()
	unwatch := context.AfterFunc(ctx, func() { stop.Store(true) })
	defer unwatch()

	var sent atomic.Int64
	lat := make([][]time.Duration, len(conns))
	errs := make([]int, len(conns))
	firstErr := make([]error, len(conns))
	var wg sync.WaitGroup
	start := time.Now()
	for w, c := range conns {
		wg.Go(func() {
			var samples []time.Duration
			if measure {
				samples = make([]time.Duration, 0, 4096)
			}
			for !stop.Load() && sent.Add(1) <= int64(limit) {
				t0 := time.Now()
				err := c.Do()
				if err != nil {
					errs[w]++
					if firstErr[w] == nil {
						firstErr[w] = err
					}
					continue
				}
				if measure {
					samples = append(samples, time.Since(t0))
				}
			}
			lat[w] = samples
		})
	}
	wg.Wait()
	r := Result{Elapsed: time.Since(start), Bounded: sent.Load() > int64(limit), latencies: slices.Concat(lat...)}
	for w, e := range errs {
		r.Errors += e
		if r.FirstErr == nil {
			r.FirstErr = firstErr[w]
		}
	}
	return r.summarize()
}

// Merge adds up runs against one target, as one run of their total time.
func Merge(runs []Result) Result {
	var m Result
	for _, r := range runs {
		m.Elapsed += r.Elapsed
		m.Errors += r.Errors
		m.Bounded = m.Bounded || r.Bounded
		m.latencies = append(m.latencies, r.latencies...)
		if m.FirstErr == nil {
			m.FirstErr = r.FirstErr
		}
	}
	return m.summarize()
}

func (r Result) summarize() Result {
	slices.Sort(r.latencies)
	all := r.latencies
	r.Requests = len(all)
	if len(all) > 0 {
		pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
		r.P50, r.P90, r.P99 = pct(0.50), pct(0.90), pct(0.99)
	}
	if r.Elapsed > 0 {
		r.RequestsPerSec = float64(r.Requests) / r.Elapsed.Seconds()
	}
	return r
}
