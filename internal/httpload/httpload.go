// Package httpload is the bounded load knit's journeys put on a running
// knit: n workers sending GETs back to back until stopped or a time bound,
// every answer but a 200 counted as a failure and the first few kept, so a
// journey can say "0 of N requests failed" across a rollout or a restart.
package httpload

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// keptFailures is how many failure messages a Load keeps.
const keptFailures = 5

// Load keeps n requests in flight until Stop or its time bound.
type Load struct {
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	sent, failed atomic.Int64
	mu           sync.Mutex
	failures     []string
	statuses     map[int]int64
	examples     map[int]string
	errors       int64
	firstFailure time.Time
	lastFailure  time.Time
	lastOK       time.Time
	longestGap   time.Duration
	gapEnd       time.Time
}

// Result is what a Load counted.
type Result struct {
	Sent, Failed int64
	// Failures are the first failures, each with its time.
	Failures []string
	// Statuses counts the answers other than 200 by status code; Errors
	// the requests that got no answer (refused, reset).
	Statuses map[int]int64
	Errors   int64
	// Examples is the first failure of each status code (0: no answer),
	// with its time, however many came before it.
	Examples map[int]string
	// FirstFailure and LastFailure bound the failures; zero without any.
	FirstFailure, LastFailure time.Time
	// LongestGap is the longest time between two 200 answers (from the
	// start for the first), ending at GapEnd: how long the load went
	// without service, failing or waiting.
	LongestGap time.Duration
	GapEnd     time.Time
}

// Start sends GET url with Host host from n workers through c until Stop
// is called or bound passes.
func Start(c *http.Client, url, host string, n int, bound time.Duration) *Load {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	l := &Load{cancel: cancel, statuses: map[int]int64{}, examples: map[int]string{}, lastOK: time.Now()}
	for range n {
		l.wg.Go(func() {
			for ctx.Err() == nil {
				l.once(c, url, host)
			}
		})
	}
	return l
}

func (l *Load) once(c *http.Client, url, host string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		l.fail(0, err.Error())
		return
	}
	req.Host = host
	resp, err := c.Do(req)
	l.sent.Add(1)
	if err != nil {
		l.fail(0, err.Error())
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		l.fail(resp.StatusCode, fmt.Sprintf("%d %s", resp.StatusCode, b))
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	l.ok()
}

// fail counts a failure: status is 0 when there was no answer.
func (l *Load) fail(status int, msg string) {
	l.failed.Add(1)
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if status == 0 {
		l.errors++
	} else {
		l.statuses[status]++
	}
	if l.firstFailure.IsZero() {
		l.firstFailure = now
	}
	l.lastFailure = now
	msg = now.Format("15:04:05.000") + " " + msg
	if len(l.failures) < keptFailures {
		l.failures = append(l.failures, msg)
	}
	if _, ok := l.examples[status]; !ok {
		l.examples[status] = msg
	}
}

func (l *Load) ok() {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if gap := now.Sub(l.lastOK); gap > l.longestGap {
		l.longestGap, l.gapEnd = gap, now
	}
	l.lastOK = now
}

// Sent is how many requests have been sent so far.
func (l *Load) Sent() int64 { return l.sent.Load() }

// Stop ends the load, waits for the requests in flight, and counts. It may
// be called more than once.
func (l *Load) Stop() Result {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return Result{Sent: l.sent.Load(), Failed: l.failed.Load(), Failures: append([]string(nil), l.failures...),
		Statuses: maps.Clone(l.statuses), Examples: maps.Clone(l.examples), Errors: l.errors, FirstFailure: l.firstFailure, LastFailure: l.lastFailure,
		LongestGap: l.longestGap, GapEnd: l.gapEnd}
}
