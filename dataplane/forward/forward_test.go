package forward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHold(t *testing.T) {
	get := httptest.NewRequest(http.MethodGet, "/", nil)
	if b := Hold(get); b != nil || b.Started() {
		t.Errorf("Hold of a request without a body = %v, want nil (never Started)", b)
	}

	post := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("payload"))
	b := Hold(post)
	if b == nil || post.Body != io.ReadCloser(b) {
		t.Fatalf("Hold did not put itself in place of the body")
	}
	if b.Started() {
		t.Error("Started before anything was read")
	}
	if err := post.Body.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(post.Body)
	if err != nil || string(got) != "payload" {
		t.Errorf("after Close the body reads %q, %v; want it still open for the next attempt", got, err)
	}
	if !b.Started() {
		t.Error("not Started after a read: a retry could send the body twice")
	}
}

func TestRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, dialErr := http.Get("http://" + addr)
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"a dial to a closed port", dialErr, true},
		{"wrapped", fmt.Errorf("attempt 2: %w", dialErr), true},
		{"a timeout", context.DeadlineExceeded, false},
		{"a reset mid-response", errors.New("connection reset by peer"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Refused(tt.err); got != tt.want {
				t.Errorf("Refused(%v) = %t, want %t", tt.err, got, tt.want)
			}
		})
	}
}

// The transport answers HTTP/2 with h2c and HTTP/1.1 with HTTP/1.1.
func TestTransportMirrorsTheProtocol(t *testing.T) {
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	upstream.Config.Protocols = new(http.Protocols)
	upstream.Config.Protocols.SetHTTP1(true)
	upstream.Config.Protocols.SetUnencryptedHTTP2(true)
	upstream.Start()
	defer upstream.Close()
	tr := NewTransport(10, 10)
	defer tr.CloseIdleConnections()
	for _, in := range []struct{ major, minor int }{{1, 1}, {2, 0}} {
		req := httptest.NewRequest(http.MethodGet, upstream.URL, nil)
		req.RequestURI = ""
		req.ProtoMajor, req.ProtoMinor = in.major, in.minor
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("HTTP/%d.%d", in.major, in.minor); string(body) != want {
			t.Errorf("HTTP/%d.%d in reached the upstream as %s, want %s", in.major, in.minor, body, want)
		}
	}
}

func TestBufferPool(t *testing.T) {
	var p BufferPool
	b := p.Get()
	if len(b) != BufferSize {
		t.Fatalf("Get = %d bytes, want %d", len(b), BufferSize)
	}
	p.Put(b)
	p.Put(make([]byte, 10)) // another size is dropped, not lent out later
	for range 3 {
		if got := p.Get(); len(got) != BufferSize {
			t.Fatalf("Get after Put = %d bytes, want %d", len(got), BufferSize)
		}
	}
}

func TestPause(t *testing.T) {
	if err := Pause(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Pause of a live request = %v, want nil", err)
	}
	if err := Pause(context.Background(), 0); err != nil {
		t.Errorf("Pause(0) = %v, want nil", err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Pause(gone, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Pause after the client left = %v, want context.Canceled at once", err)
	}
}
