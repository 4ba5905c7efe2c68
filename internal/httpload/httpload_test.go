package httpload

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knitops/knit/internal/poll"
)

func TestLoadCountsEveryAnswerButA200AsAFailure(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "hello.example.com" {
			http.Error(w, "wrong host "+r.Host, http.StatusNotFound)
			return
		}
		if n.Add(1)%10 == 0 {
			http.Error(w, "every tenth fails", http.StatusBadGateway)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	l := Start(srv.Client(), srv.URL, "hello.example.com", 3, time.Minute)
	poll.Until(t, "100 requests sent", time.Millisecond, 30*time.Second, func(context.Context) (bool, string) {
		return l.Sent() >= 100, fmt.Sprintf("%d sent", l.Sent())
	})
	r := l.Stop()
	if r.Sent < 100 || r.Sent != n.Load() {
		t.Errorf("sent %d, server saw %d", r.Sent, n.Load())
	}
	if want := n.Load() / 10; r.Failed != want {
		t.Errorf("failed %d, want every tenth: %d", r.Failed, want)
	}
	if r.Statuses[http.StatusBadGateway] != r.Failed || len(r.Statuses) != 1 || r.Errors != 0 || !strings.Contains(r.Examples[http.StatusBadGateway], "502 every tenth fails") {
		t.Errorf("statuses %v, errors %d: want every failure counted as a 502", r.Statuses, r.Errors)
	}
	if r.FirstFailure.IsZero() || r.LastFailure.Before(r.FirstFailure) || r.LongestGap <= 0 || r.GapEnd.IsZero() {
		t.Errorf("failures from %v to %v, longest gap %v ending %v: want the span of the failures and a gap", r.FirstFailure, r.LastFailure, r.LongestGap, r.GapEnd)
	}
	if len(r.Failures) != keptFailures || !strings.Contains(r.Failures[0], "502 every tenth fails") {
		t.Errorf("kept failures %q, want the first %d with status and body", r.Failures, keptFailures)
	}
	if again := l.Stop(); again.Sent != r.Sent {
		t.Errorf("a second Stop counted %d, want %d", again.Sent, r.Sent)
	}
}

func TestLoadStopsAtItsBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	l := Start(srv.Client(), srv.URL, "h", 2, 50*time.Millisecond)
	l.wg.Wait() // returns only once the bound has ended every worker
	if r := l.Stop(); r.Sent == 0 || r.Failed != 0 || !r.FirstFailure.IsZero() {
		t.Errorf("bounded load: %+v", r)
	}
}

func TestLoadCountsRequestsWithoutAnAnswerAsErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	url := srv.URL
	srv.Close() // refused from now on
	l := Start(http.DefaultClient, url, "h", 1, time.Minute)
	poll.Until(t, "a few requests sent", time.Millisecond, 30*time.Second, func(context.Context) (bool, string) {
		return l.Sent() >= 3, fmt.Sprintf("%d sent", l.Sent())
	})
	r := l.Stop()
	if r.Errors != r.Sent || r.Failed != r.Sent || len(r.Statuses) != 0 {
		t.Errorf("refused load: %d sent, %d failed, %d errors, statuses %v: want every request an error", r.Sent, r.Failed, r.Errors, r.Statuses)
	}
}
