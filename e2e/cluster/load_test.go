//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// load keeps n requests in flight against one host until stopped or its
// time bound; every answer but a 200 is a failure.
type load struct {
	cancel       context.CancelFunc
	wg           sync.WaitGroup
	sent, failed atomic.Int64
	mu           sync.Mutex
	failures     []string
}

func startLoad(c *http.Client, addr, host string, n int, bound time.Duration) *load {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	l := &load{cancel: cancel}
	for range n {
		l.wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
				req.Host = host
				resp, err := c.Do(req)
				l.sent.Add(1)
				switch {
				case err != nil:
					l.fail(err.Error())
				case resp.StatusCode != http.StatusOK:
					b, _ := io.ReadAll(resp.Body)
					l.fail(fmt.Sprintf("%d %s", resp.StatusCode, b))
				default:
					_, _ = io.Copy(io.Discard, resp.Body)
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		})
	}
	return l
}

func (l *load) fail(msg string) {
	l.failed.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) < 5 {
		l.failures = append(l.failures, time.Now().Format("15:04:05.000")+" "+msg)
	}
}

// stop ends the load, waits for requests in flight, and counts.
func (l *load) stop() (sent, failed int64, first []string) {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sent.Load(), l.failed.Load(), l.failures
}
