package queue

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/websocket"
)

// A websocket through the whole queue-proxy is closed by each of the
// Revision's limits as Knative's queue-proxy closes it: the limit counts
// from the upgrade request's arrival, and messages flowing both ways on
// the upgraded connection do not hold it open.
func TestWebsocketTimeouts(t *testing.T) {
	// Long enough for the handshake and a first echo on a loaded machine:
	// only the close is awaited, never a bound on how fast it comes.
	const limit = 2 * time.Second
	tests := []struct {
		name   string
		config func(*Config)
		chatty bool // the client sends a message every 50ms, echoed back
	}{
		{"timeoutSeconds closes a silent websocket", func(c *Config) { c.RevisionTimeout = limit }, false},
		{"timeoutSeconds closes a websocket while messages flow", func(c *Config) { c.RevisionTimeout = limit }, true},
		{"responseStartTimeoutSeconds closes a websocket while messages flow", func(c *Config) {
			c.RevisionTimeout, c.ResponseStartTimeout = time.Minute, limit
		}, true},
		{"idleTimeoutSeconds closes a silent websocket", func(c *Config) { c.RevisionTimeout, c.IdleTimeout = time.Minute, limit }, false},
		{"idleTimeoutSeconds closes a websocket while messages flow", func(c *Config) { c.RevisionTimeout, c.IdleTimeout = time.Minute, limit }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			appDone := make(chan struct{})
			port := startApp(t, websocket.Handler(func(ws *websocket.Conn) {
				io.Copy(ws, ws)
				close(appDone)
			}), false)
			q := startQueue(t, port, tt.config)

			start := time.Now()
			ws, err := websocket.Dial(strings.Replace(q.url, "http", "ws", 1)+"/echo", "", "http://localhost/")
			if err != nil {
				t.Fatalf("dialing through the queue: %v", err)
			}
			defer ws.Close()
			// A connection the queue never closes fails the test here.
			ws.SetDeadline(start.Add(limit + 10*time.Second))

			echoes := 0
			if tt.chatty {
				for ; ; echoes++ {
					msg := fmt.Sprint("message ", echoes)
					if err = websocket.Message.Send(ws, msg); err != nil {
						break
					}
					var got string
					if err = websocket.Message.Receive(ws, &got); err != nil {
						break
					}
					if got != msg {
						t.Fatalf("echo = %q, want %q", got, msg)
					}
					time.Sleep(50 * time.Millisecond)
				}
			} else {
				var got string
				err = websocket.Message.Receive(ws, &got)
			}
			closedAfter := time.Since(start)

			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				t.Fatalf("websocket still open %v after dialing (%d echoes), want it closed at the %v limit", closedAfter, echoes, limit)
			}
			switch {
			case tt.chatty && echoes == 0:
				t.Errorf("no message came back before the close (%v): the websocket never worked", err)
			case !tt.chatty && !errors.Is(err, io.EOF):
				t.Errorf("silent websocket ended with %v, want the queue to close it (EOF)", err)
			}
			// The limit counts from the request's arrival, which follows
			// start: a close before it would be something else's doing.
			if closedAfter < limit {
				t.Errorf("websocket closed %v after dialing, before the %v limit (%v)", closedAfter, limit, err)
			}
			select {
			case <-appDone:
			case <-time.After(10 * time.Second):
				t.Error("the app's end of the websocket is still open after the queue closed the client's")
			}
		})
	}
}

// hijackRecorder is a ResponseRecorder that can be hijacked: the
// connection is one end of a pipe.
type hijackRecorder struct {
	*httptest.ResponseRecorder
	conn net.Conn
}

func (h hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.conn, bufio.NewReadWriter(bufio.NewReader(h.conn), bufio.NewWriter(h.conn)), nil
}

// The timeout handler bounds an upgraded connection as Knative's does:
// what goes over the hijacked connection is no write to the response, so
// each limit runs on from what the response saw before the upgrade.
func TestTimeoutHandlerUpgraded(t *testing.T) {
	const never = time.Hour // the app gives up on its own then
	tests := []struct {
		name                       string
		total, responseStart, idle time.Duration
		hints                      time.Duration // when a 103 Early Hints goes out, if one does
		upgrade                    time.Duration // when the app hijacks the connection
		wantEnd                    time.Duration
		wantCause                  string // "" when no limit ends it
	}{{
		name:    "total timeout closes it",
		total:   10 * time.Second,
		upgrade: time.Second, wantEnd: 10 * time.Second, wantCause: "timeoutSeconds",
	}, {
		name:  "response start timeout closes it",
		total: time.Minute, responseStart: 5 * time.Second,
		upgrade: time.Second, wantEnd: 5 * time.Second, wantCause: "responseStartTimeoutSeconds",
	}, {
		name:  "idle timeout counts from arrival",
		total: time.Minute, idle: 5 * time.Second,
		upgrade: time.Second, wantEnd: 5 * time.Second, wantCause: "idleTimeoutSeconds",
	}, {
		name:  "idle timeout counts from the last write before the upgrade",
		total: time.Minute, idle: 5 * time.Second,
		hints: 2 * time.Second, upgrade: 3 * time.Second, wantEnd: 7 * time.Second, wantCause: "idleTimeoutSeconds",
	}, {
		name:  "total timeout spares a response started before the upgrade",
		total: 10 * time.Second,
		hints: 2 * time.Second, upgrade: 3 * time.Second, wantEnd: never,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					ended time.Duration
					cause error
				)
				server, client := net.Pipe()
				stop := make(chan struct{})
				defer func() {
					close(stop)
					client.Close()
				}()
				// The client sends every 100ms and reads all it gets.
				go io.Copy(io.Discard, client)
				go func() {
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
						}
						if _, err := client.Write([]byte("ping")); err != nil {
							return
						}
					}
				}()
				app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					start := time.Now()
					if tt.hints > 0 {
						time.Sleep(tt.hints)
						w.WriteHeader(http.StatusEarlyHints)
					}
					time.Sleep(tt.upgrade - time.Since(start))
					conn, brw, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Errorf("Hijack: %v", err)
						return
					}
					defer conn.Close()
					brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
					brw.Flush()
					// The app answers every 100ms and reads all it gets,
					// until the request's context ends or it gives up.
					go io.Copy(io.Discard, conn)
					tick := time.NewTicker(100 * time.Millisecond)
					defer tick.Stop()
					giveUp := time.After(never - time.Since(start))
					for {
						select {
						case <-r.Context().Done():
							ended, cause = time.Since(start), context.Cause(r.Context())
							return
						case <-giveUp:
							ended = time.Since(start)
							return
						case <-tick.C:
							conn.Write([]byte("pong"))
						}
					}
				})
				rec := hijackRecorder{httptest.NewRecorder(), server}
				newTimeoutHandler(app, tt.total, tt.responseStart, tt.idle).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))

				if ended != tt.wantEnd {
					t.Errorf("upgraded connection ended at %v, want %v", ended, tt.wantEnd)
				}
				var te *TimeoutError
				switch {
				case tt.wantCause == "" && cause != nil:
					t.Errorf("request context ended with %v, want it alive", cause)
				case tt.wantCause != "" && (!errors.As(cause, &te) || te.Setting != tt.wantCause):
					t.Errorf("request context cause = %v, want a %s TimeoutError", cause, tt.wantCause)
				}
				if rec.Code == http.StatusGatewayTimeout || rec.Body.Len() > 0 {
					t.Errorf("the timeout wrote %d %q to the upgraded response, want nothing", rec.Code, rec.Body)
				}
			})
		})
	}
}
