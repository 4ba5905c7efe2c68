package queue

import (
	"bufio"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knitops/knit/dataplane/forward"
)

// fuzzScript turns fuzz bytes into a bounded sequence of exchanges: each
// a request head the queue could receive and the raw bytes the app
// writes back in one go, which may be more than its answer (a body after
// a HEAD answer or a 204, bytes past the framing).
type fuzzScript struct{ b []byte }

func (s *fuzzScript) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

// text takes up to max bytes as header-value-safe text.
func (s *fuzzScript) text(max int) string {
	n := int(s.next()) % (max + 1)
	var sb strings.Builder
	for range n {
		c := s.next()%94 + '!' // printable ASCII, no space
		sb.WriteByte(c)
	}
	return sb.String()
}

var (
	fuzzStatuses = []int{200, 201, 204, 206, 304, 404, 500}
	// fuzzHeaders are request headers the forwarding rules treat apart.
	fuzzHeaders = []string{"X-Forwarded-For", "X-Forwarded-Proto", "Forwarded", "X-Forwarded-Host", "Connection", "Te",
		"User-Agent", "X-App", "Keep-Alive", "Proxy-Authorization", "Knative-Serving-Revision", "K-Proxy-Request", "X_Forwarded_For"}
	fuzzExtras = []string{"", secretAnswer, "x", "\r\n", "HTTP/1.1 204 No Content\r\n\r\n"}
)

// exchangeFor decodes one exchange: the request to send and, under
// path, the app's raw answer.
func (s *fuzzScript) exchangeFor(path string) (request, answer string) {
	method := http.MethodGet
	if s.next()&1 == 1 {
		method = http.MethodHead
	}
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s?q=%s HTTP/1.1\r\nHost: h%s.example.com\r\n", method, path, strconv.Itoa(int(s.next())), strconv.Itoa(int(s.next())))
	for range int(s.next() % 4) {
		fmt.Fprintf(&req, "%s: %s\r\n", fuzzHeaders[int(s.next())%len(fuzzHeaders)], s.text(12))
	}
	req.WriteString("\r\n")

	status := fuzzStatuses[int(s.next())%len(fuzzStatuses)]
	flags := s.next()
	body := s.text(40)
	var ans strings.Builder
	if flags&1 != 0 {
		ans.WriteString("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n")
	}
	fmt.Fprintf(&ans, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nX-Answer: %s\r\n", status, http.StatusText(status), path)
	switch flags >> 1 % 4 {
	case 0: // Content-Length
		fmt.Fprintf(&ans, "Content-Length: %d\r\n\r\n%s", len(body), body)
	case 1: // chunked, maybe with a trailer
		ans.WriteString("Transfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n")
		if body != "" {
			fmt.Fprintf(&ans, "%x\r\n%s\r\n", len(body), body)
		}
		ans.WriteString("0\r\nX-Sum: 1\r\n\r\n")
	case 2: // until the app closes
		fmt.Fprintf(&ans, "Connection: close\r\n\r\n%s", body)
	default: // no body announced, one sent anyway
		fmt.Fprintf(&ans, "Content-Length: 0\r\n\r\n%s", body)
	}
	if flags&0x10 != 0 {
		ans.WriteString(fuzzExtras[int(s.next())%len(fuzzExtras)])
	}
	return req.String(), ans.String()
}

// The fast path, forwarding a sequence of requests on one forwarder,
// answers each as httputil.ReverseProxy answers it alone, whatever the
// app writes: in particular no answer carries bytes the app wrote after
// an earlier one. The reference sends every request on a connection of
// its own, so its answers cannot depend on what came before.
func FuzzFastPathMatchesReverseProxy(f *testing.F) {
	// Seeds: the number of exchanges less one, then each exchange as
	// exchangeFor reads it (method, query, host, headers, status, flags,
	// body, extra).
	next := []byte{0, 0, 0, 0, 0, 0, 4, 'm', 'i', 'n', 'e'}
	seed := func(first ...byte) []byte { return append(append([]byte{1}, first...), next...) }
	f.Add([]byte{0, 0, 1, 2, 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'})
	f.Add(seed(1, 0, 0, 0, 0, 0x10, 3, 'a', 'b', 'c', 1))             // HEAD, a body and another answer after it
	f.Add(seed(0, 0, 0, 0, 2, 0x10, 4, 'b', 'o', 'd', 'y', 1))        // 204 with a body and another answer
	f.Add(seed(0, 0, 0, 0, 4, 0x12, 2, 'o', 'k', 1))                  // 304, chunked, another answer after it
	f.Add(seed(0, 0, 0, 0, 0, 0x06, 2, 'o', 'k'))                     // Content-Length 0 and a body anyway
	f.Add(seed(0, 0, 0, 0, 0, 0x10, 2, 'o', 'k', 4))                  // an empty 204 past Content-Length
	f.Add(seed(0, 3, 4, 2, 0, 3, 1, 2, 3, 3, 2, 5, 6, 0, 0x05, 1, 7)) // headers, early hints, until close
	f.Fuzz(func(t *testing.T, script []byte) {
		s := &fuzzScript{b: script}
		n := 1 + int(s.next()%4)
		answers := map[string]string{}
		requests := make([]string, n)
		for i := range n {
			path := "/" + strconv.Itoa(i)
			requests[i], answers[path] = s.exchangeFor(path)
		}
		log := slog.New(slog.DiscardHandler)
		fastApp, fastSaw := rawApp(t, answers)
		slowApp, slowSaw := rawApp(t, answers)
		transport := newAppTransport(fastApp, ProtocolAuto, 0)
		t.Cleanup(transport.close)
		alone := forward.NewTransport(1, 1)
		alone.HTTP1.DisableKeepAlives = true
		t.Cleanup(alone.CloseIdleConnections)
		fast := httptest.NewServer(newAppForwarder(fastApp, transport, log))
		t.Cleanup(fast.Close)
		slow := httptest.NewServer(&appForwarder{addr: slowApp, slow: newAppProxy(slowApp, alone, log), log: log})
		t.Cleanup(slow.Close)
		for i, raw := range requests {
			if _, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw))); err != nil {
				t.Fatalf("request %d does not parse: %v\n%q", i, err, raw)
			}
			gotFast := exchange(t, fast.Listener.Addr().String(), raw)
			gotSlow := exchange(t, slow.Listener.Addr().String(), raw)
			if diff := cmp.Diff(gotSlow, gotFast); diff != "" {
				t.Fatalf("request %d %q, the app answering %q: the client got (-ReverseProxy alone +fast path):\n%s", i, raw, answers["/"+strconv.Itoa(i)], diff)
			}
			a, b := <-fastSaw, <-slowSaw
			delete(b.Header, "Connection") // the reference asks the app to close
			if diff := cmp.Diff(b, a); diff != "" {
				t.Fatalf("request %d %q: the app saw (-ReverseProxy +fast path):\n%s", i, raw, diff)
			}
		}
	})
}
