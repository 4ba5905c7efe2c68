package queue

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestResponseWriterStatus(t *testing.T) {
	tests := []struct {
		name  string
		write func(w http.ResponseWriter)
		want  int
	}{
		{"nothing written", func(http.ResponseWriter) {}, 0},
		{"body only", func(w http.ResponseWriter) { io.WriteString(w, "x") }, 200},
		{"explicit status", func(w http.ResponseWriter) { w.WriteHeader(404); w.WriteHeader(500) }, 404},
		{"early hints then status", func(w http.ResponseWriter) { w.WriteHeader(103); w.WriteHeader(201) }, 201},
		{"flush commits 200", func(w http.ResponseWriter) { w.(http.Flusher).Flush() }, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rw, owned := wrapWriter(rec)
			if !owned {
				t.Fatal("wrapWriter did not wrap a plain writer")
			}
			if again, owned := wrapWriter(rw); again != rw || owned {
				t.Error("wrapWriter wrapped its own writer again")
			}
			tt.write(rw)
			if got := rw.Status(); got != tt.want {
				t.Errorf("Status() = %d, want %d", got, tt.want)
			}
			releaseWriter(rw)
		})
	}
}

// Hijack reaches the server's connection through the wrapper.
func TestResponseWriterHijack(t *testing.T) {
	var status int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw, _ := wrapWriter(w)
		defer releaseWriter(rw)
		conn, brw, err := http.NewResponseController(rw).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer conn.Close()
		status = rw.Status()
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
		brw.Flush()
	}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(bufio.NewReader(res.Body))
	res.Body.Close()
	if string(body) != "hijacked" || status != http.StatusSwitchingProtocols {
		t.Errorf("body %q, status seen %d; want hijacked, 101", body, status)
	}
}
