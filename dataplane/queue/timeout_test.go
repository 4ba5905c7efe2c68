package queue

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// slowApp writes its steps with pauses between them, stopping early when
// the request context ends, as ReverseProxy does.
func slowApp(steps ...step) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, s := range steps {
			select {
			case <-time.After(s.after):
			case <-r.Context().Done():
				return
			}
			if s.header != 0 {
				w.WriteHeader(s.header)
			}
			if s.body != "" {
				io.WriteString(w, s.body)
			}
		}
	})
}

type step struct {
	after  time.Duration
	header int
	body   string
}

func TestTimeoutHandler(t *testing.T) {
	tests := []struct {
		name                       string
		total, responseStart, idle time.Duration
		app                        http.Handler
		wantCode                   int
		wantBody                   string
		wantCause                  string // "" when the request was not ended
	}{{
		name:     "answers in time",
		total:    10 * time.Second,
		app:      slowApp(step{after: time.Second, body: "hello"}),
		wantCode: http.StatusOK, wantBody: "hello",
	}, {
		name:      "total timeout before any answer",
		total:     10 * time.Second,
		app:       slowApp(step{after: time.Minute, body: "late"}),
		wantCode:  http.StatusGatewayTimeout,
		wantBody:  "queue-proxy: request timeout: the app did not finish answering within 10s (timeoutSeconds)\n",
		wantCause: "timeoutSeconds",
	}, {
		// Knative's semantics (its conformance test "writes first byte
		// before timeout"): timeoutSeconds bounds the wait for the answer,
		// not an answer under way.
		name:     "total timeout mid-answer lets the response finish",
		total:    10 * time.Second,
		app:      slowApp(step{after: time.Second, body: "part one;"}, step{after: time.Minute, body: "part two"}),
		wantCode: http.StatusOK, wantBody: "part one;part two",
	}, {
		name:  "response start timeout",
		total: time.Minute, responseStart: 5 * time.Second,
		app:       slowApp(step{after: 6 * time.Second, body: "late"}),
		wantCode:  http.StatusGatewayTimeout,
		wantBody:  "queue-proxy: response start timeout: the app did not start answering within 5s (responseStartTimeoutSeconds)\n",
		wantCause: "responseStartTimeoutSeconds",
	}, {
		name:  "response start met, then slow body is fine",
		total: time.Minute, responseStart: 5 * time.Second,
		app:      slowApp(step{after: 4 * time.Second, header: http.StatusAccepted}, step{after: 30 * time.Second, body: "done"}),
		wantCode: http.StatusAccepted, wantBody: "done",
	}, {
		name:  "idle timeout between writes",
		total: time.Minute, idle: 5 * time.Second,
		app:      slowApp(step{after: 4 * time.Second, body: "a"}, step{after: 4 * time.Second, body: "b"}, step{after: 6 * time.Second, body: "c"}),
		wantCode: http.StatusOK, wantBody: "ab",
		wantCause: "idleTimeoutSeconds",
	}, {
		name:      "idle timeout before the first write",
		idle:      5 * time.Second,
		app:       slowApp(step{after: 6 * time.Second, body: "late"}),
		wantCode:  http.StatusGatewayTimeout,
		wantBody:  "queue-proxy: idle timeout: the app wrote nothing within 5s (idleTimeoutSeconds)\n",
		wantCause: "idleTimeoutSeconds",
	}, {
		name:     "no timeouts configured",
		app:      slowApp(step{after: time.Hour, body: "patient"}),
		wantCode: http.StatusOK, wantBody: "patient",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var cause error
				app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					tt.app.ServeHTTP(w, r)
					cause = context.Cause(r.Context())
				})
				h := newTimeoutHandler(app, tt.total, tt.responseStart, tt.idle)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
				if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
					t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body, tt.wantCode, tt.wantBody)
				}
				var te *TimeoutError
				switch {
				case tt.wantCause == "" && cause != nil:
					t.Errorf("request context ended with %v, want it alive", cause)
				case tt.wantCause != "" && (!errors.As(cause, &te) || te.Setting != tt.wantCause):
					t.Errorf("request context cause = %v, want a %s TimeoutError", cause, tt.wantCause)
				}
			})
		})
	}
}

// Writes after the deadline are refused so a handler that ignores its
// context cannot write into the 504.
func TestTimeoutHandlerRefusesLateWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var lateErr error
		app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(2 * time.Second) // ignores the context
			_, lateErr = io.WriteString(w, "late")
		})
		rec := httptest.NewRecorder()
		newTimeoutHandler(app, time.Second, 0, 0).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if !errors.Is(lateErr, http.ErrHandlerTimeout) {
			t.Errorf("late write error = %v, want http.ErrHandlerTimeout", lateErr)
		}
		if rec.Code != http.StatusGatewayTimeout {
			t.Errorf("status = %d, want 504", rec.Code)
		}
	})
}

// The timeout handler shares the writer an outer handler wrapped, so the
// metrics see the 504.
func TestTimeoutHandlerStatusVisibleOutside(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen int
		inner := newTimeoutHandler(slowApp(step{after: time.Hour}), time.Second, 0, 0)
		outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw, owned := wrapWriter(w)
			defer func() {
				seen = rw.Status()
				if owned {
					releaseWriter(rw)
				}
			}()
			inner.ServeHTTP(rw, r)
		})
		outer.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		if seen != http.StatusGatewayTimeout {
			t.Errorf("outer handler saw status %d, want 504", seen)
		}
	})
}

// One handler serves request after request with deadlines of finished
// requests: a reused deadline starts clean, whatever ended the last one.
func TestTimeoutHandlerReusesDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		apps := map[string]http.Handler{
			"/ok":     slowApp(step{after: time.Second, body: "ok"}),
			"/stream": slowApp(step{after: 2 * time.Second, body: "a"}, step{after: 2 * time.Second, body: "b"}, step{after: 2 * time.Second, body: "c"}),
			"/silent": slowApp(step{after: time.Minute, body: "late"}),
			"/stall":  slowApp(step{after: time.Second, header: http.StatusOK, body: "x"}, step{after: time.Minute, body: "late"}),
		}
		h := newTimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			apps[r.URL.Path].ServeHTTP(w, r)
		}), 10*time.Second, 0, 3*time.Second)
		for i, tt := range []struct {
			path     string
			wantCode int
			wantBody string
		}{
			{"/ok", http.StatusOK, "ok"},
			{"/silent", http.StatusGatewayTimeout, "queue-proxy: idle timeout: the app wrote nothing within 3s (idleTimeoutSeconds)\n"},
			{"/ok", http.StatusOK, "ok"},
			{"/stream", http.StatusOK, "abc"},
			{"/stall", http.StatusOK, "x"},
			{"/stream", http.StatusOK, "abc"},
			{"/ok", http.StatusOK, "ok"},
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Errorf("request %d (%s): %d %q, want %d %q", i+1, tt.path, rec.Code, rec.Body, tt.wantCode, tt.wantBody)
			}
		}
	})
}
