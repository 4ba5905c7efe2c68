package forward

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func limitedServer(t *testing.T, l Limits) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	l.Apply(srv.Config)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// A keep-alive connection left idle is closed by the server once its
// IdleTimeout passes, instead of living as long as the client likes.
func TestLimitsCloseIdleConnections(t *testing.T) {
	l := DefaultLimits
	l.IdleTimeout = 50 * time.Millisecond
	c, err := net.Dial("tcp", limitedServer(t, l))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(res.Body)
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // the bound of this test, not of the server
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("an idle keep-alive connection: read %v, want EOF (closed by the server)", err)
	}
}

// A request head past MaxHeaderBytes is refused with 431.
func TestLimitsRefuseLargeHeads(t *testing.T) {
	addr := limitedServer(t, DefaultLimits)
	for _, tt := range []struct {
		size int
		want int
	}{{1 << 10, http.StatusOK}, {DefaultLimits.MaxHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge}} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		req.Header.Set("X-Big", strings.Repeat("a", tt.size))
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatalf("%d bytes of header: %v", tt.size, err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("%d bytes of header: %d, want %d", tt.size, res.StatusCode, tt.want)
		}
	}
}

func TestLimitsKeepAReadHeaderTimeoutSet(t *testing.T) {
	s := &http.Server{ReadHeaderTimeout: time.Minute}
	DefaultLimits.Apply(s)
	if s.ReadHeaderTimeout != time.Minute || s.IdleTimeout != DefaultLimits.IdleTimeout || s.MaxHeaderBytes != DefaultLimits.MaxHeaderBytes {
		t.Errorf("Apply = %v, %v, %d; want the server's ReadHeaderTimeout kept and the limits set", s.ReadHeaderTimeout, s.IdleTimeout, s.MaxHeaderBytes)
	}
}
