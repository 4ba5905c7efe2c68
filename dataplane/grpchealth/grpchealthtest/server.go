// Package grpchealthtest serves the gRPC Health service on loopback for
// tests of what probes apps with it: real cleartext HTTP/2, the gRPC wire
// format, and statuses a test changes as it goes.
package grpchealthtest

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Server answers grpc.health.v1.Health/Check for each service by what
// Set last said: a serving status ("SERVING", "NOT_SERVING", "UNKNOWN",
// "SERVICE_UNKNOWN"), "empty" for a response with no status field, or
// "code N" for a trailers-only gRPC error. A service never set is
// status 5 (not found), as grpc-go's health server answers it.
type Server struct {
	// Addr is where it listens, host:port on 127.0.0.1.
	Addr string
	// Asked receives every service asked for, when the test reads them;
	// calls do not wait for it.
	Asked chan string

	mu       sync.Mutex
	statuses map[string]string
}

// Start serves until the test ends, with statuses set.
func Start(t testing.TB, statuses map[string]string) *Server {
	t.Helper()
	s := &Server{Asked: make(chan string, 64), statuses: map[string]string{}}
	for k, v := range statuses {
		s.statuses[k] = v
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /grpc.health.v1.Health/Check", s.check)
	srv := &http.Server{Handler: mux, Protocols: new(http.Protocols)}
	srv.Protocols.SetUnencryptedHTTP2(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

// Port is the port it listens on.
func (s *Server) Port() int {
	a, _ := net.ResolveTCPAddr("tcp", s.Addr)
	return a.Port
}

// Set changes what service is answered.
func (s *Server) Set(service, answer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses[service] = answer
}

var statusNumbers = map[string]uint64{"UNKNOWN": 0, "SERVING": 1, "NOT_SERVING": 2, "SERVICE_UNKNOWN": 3}

func (s *Server) check(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 || r.Header.Get("Content-Type") != "application/grpc" || r.Header.Get("TE") != "trailers" {
		http.Error(w, "not a gRPC call", http.StatusBadRequest)
		return
	}
	body, _ := io.ReadAll(r.Body)
	service, ok := decodeService(body)
	if !ok {
		http.Error(w, "not a HealthCheckRequest", http.StatusBadRequest)
		return
	}
	select {
	case s.Asked <- service:
	default:
	}
	s.mu.Lock()
	answer, known := s.statuses[service]
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/grpc")
	if !known {
		w.Header().Set("Grpc-Status", "5")
		w.Header().Set("Grpc-Message", "unknown%20service")
		return
	}
	if code, isCode := strings.CutPrefix(answer, "code "); isCode {
		w.Header().Set("Grpc-Status", code)
		return
	}
	w.Header().Set("Trailer", "Grpc-Status")
	var msg []byte
	if answer != "empty" {
		msg = binary.AppendUvarint([]byte{1 << 3}, statusNumbers[answer])
	}
	frame := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	w.Write(append(frame, msg...))
	w.Header().Set("Grpc-Status", "0")
}

// decodeService reads a framed HealthCheckRequest's service field.
func decodeService(body []byte) (string, bool) {
	if len(body) < 5 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		return "", false
	}
	msg := body[5:]
	if len(msg) == 0 {
		return "", true
	}
	if msg[0] != 1<<3|2 {
		return "", false
	}
	n, k := binary.Uvarint(msg[1:])
	if k <= 0 || uint64(len(msg)-1-k) < n {
		return "", false
	}
	return string(msg[1+k : 1+k+int(n)]), true
}
