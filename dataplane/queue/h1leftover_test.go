package queue

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// secretAnswer is a whole HTTP answer an app wrote where none belonged:
// a forwarder that reads it as the next request's answer hands one
// user's response to another.
const secretAnswer = "HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\nsomeone's data!"

// An app that writes more than its answer's framing says (a body after
// a HEAD answer or a 204/304, bytes past Content-Length or after the last
// chunk) leaves bytes on the connection. The fast path must not hand the
// connection to the next request: the leftover would be read as that
// request's answer. http.Transport closes such a connection too.
func TestFastPathDiscardsLeftoverBytes(t *testing.T) {
	answers := map[string]string{
		"/head":    "HTTP/1.1 200 OK\r\nContent-Length: 46\r\n\r\n" + secretAnswer,
		"/empty":   "HTTP/1.1 204 No Content\r\n\r\n" + secretAnswer,
		"/notmod":  "HTTP/1.1 304 Not Modified\r\n\r\n" + secretAnswer,
		"/over":    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + secretAnswer,
		"/chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n" + secretAnswer,
		"/next":    "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nmine",
	}
	for _, tt := range []struct{ name, first string }{
		{"a body after a HEAD answer", "HEAD /head HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"a body after a 204", "GET /empty HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"a body after a 304", "GET /notmod HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"bytes past Content-Length", "GET /over HTTP/1.1\r\nHost: a\r\n\r\n"},
		{"bytes after the last chunk", "GET /chunked HTTP/1.1\r\nHost: a\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			appAddr, _ := rawApp(t, answers)
			transport := newAppTransport(appAddr, ProtocolAuto, 0)
			t.Cleanup(transport.close)
			srv := httptest.NewServer(newAppForwarder(appAddr, transport, slog.New(slog.DiscardHandler)))
			t.Cleanup(srv.Close)
			addr := srv.Listener.Addr().String()
			exchange(t, addr, tt.first)
			got := exchange(t, addr, "GET /next HTTP/1.1\r\nHost: b\r\n\r\n")
			if last := got[len(got)-1]; last.Status != http.StatusOK || last.Body != "mine" {
				t.Errorf("the next request got %d %q, want 200 \"mine\" (the app's answer to it, not the bytes left over from another)", last.Status, last.Body)
			}
		})
	}
}
