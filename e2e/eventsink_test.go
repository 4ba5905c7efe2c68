//go:build !unit

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
)

// knitEvent is a CloudEvent as a sink receives it, with knit's data
// decoded the way a consumer would, from the wire format alone.
type knitEvent struct {
	ID, Type, Subject, Source string
	// Structured says the event came as application/cloudevents+json.
	Structured bool
	Data       struct {
		Repo     string `json:"repo"`
		Branch   string `json:"branch"`
		Commit   string `json:"commit"`
		Author   string `json:"author"`
		Message  string `json:"message"`
		Revision string `json:"revision"`
		URL      string `json:"url"`
		Failure  *struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"failure"`
	}
}

func (e knitEvent) String() string {
	return fmt.Sprintf("%s %s commit=%.7s revision=%s", e.Type, e.Subject, e.Data.Commit, e.Data.Revision)
}

// eventSink is a CloudEvents HTTP receiver on loopback that records what
// it is sent, parsing with the CloudEvents SDK's HTTP binding.
type eventSink struct {
	srv *httptest.Server

	mu       sync.Mutex
	received []knitEvent // in arrival order, redeliveries included
	bad      []string    // requests that were not valid knit events
}

func startEventSink(t *testing.T) *eventSink {
	t.Helper()
	s := &eventSink{}
	s.srv = httptest.NewServer(s) // 127.0.0.1
	t.Cleanup(s.srv.Close)
	return s
}

func (s *eventSink) URL() string { return s.srv.URL }

func (s *eventSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e, err := cehttp.NewEventFromHTTPRequest(r)
	if err == nil {
		err = e.Validate()
	}
	var ke knitEvent
	if err == nil {
		ke = knitEvent{ID: e.ID(), Type: e.Type(), Subject: e.Subject(), Source: e.Source(),
			Structured: r.Header.Get("Content-Type") == cloudevents.ApplicationCloudEventsJSON}
		if e.DataContentType() != cloudevents.ApplicationJSON {
			err = fmt.Errorf("datacontenttype %q, want %s", e.DataContentType(), cloudevents.ApplicationJSON)
		} else {
			err = json.Unmarshal(e.Data(), &ke.Data)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.bad = append(s.bad, fmt.Sprintf("%s %s: %v", r.Method, r.Header.Get("Content-Type"), err))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.received = append(s.received, ke)
	w.WriteHeader(http.StatusAccepted)
}

// events are the distinct events received (by id, first delivery kept)
// that match, in arrival order.
func (s *eventSink) events(match func(knitEvent) bool) []knitEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	var out []knitEvent
	for _, e := range s.received {
		if seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		if match == nil || match(e) {
			out = append(out, e)
		}
	}
	return out
}

func (s *eventSink) rejected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bad...)
}

// ofType matches events of type typ about subject ("" for any).
func ofType(typ, subject string) func(knitEvent) bool {
	return func(e knitEvent) bool { return e.Type == typ && (subject == "" || e.Subject == subject) }
}

// waitForEvent waits for the first event s received that matches.
func waitForEvent(t *testing.T, s *eventSink, what string, match func(knitEvent) bool) knitEvent {
	t.Helper()
	var found knitEvent
	waitFor(t, "event "+what, 3*time.Minute, func(context.Context) (bool, string) {
		got := s.events(match)
		if len(got) == 0 {
			return false, fmt.Sprintf("received %v", s.events(nil))
		}
		found = got[0]
		return true, ""
	})
	return found
}
