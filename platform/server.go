package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Server is one of knit's request-path listeners (ingress, activator, the
// autoscaler's stats receiver, the Git hub) run by the controller-runtime
// manager, so every component starts, serves and drains the same way.
//
// On stop it first drains: for QuietPeriod it keeps serving while
// ReadyCheck fails, so endpoints, kube-proxy and the ingress stop sending
// new requests here (Knative's drain); then it stops accepting and gives
// requests in flight up to ShutdownTimeout to finish.
type Server struct {
	// Name is used in logs and errors.
	Name string
	// Listener is bound by Listen, before anything slow starts, so a busy
	// port fails at once.
	Listener net.Listener
	// Server carries the handler and timeouts; HTTP/1.1 and h2c.
	Server *http.Server
	// QuietPeriod is how long to keep serving after the stop signal.
	QuietPeriod time.Duration
	// ShutdownTimeout bounds the wait for requests in flight.
	ShutdownTimeout time.Duration

	draining atomic.Bool
}

// Listen binds addr for a Server serving h (set later with Server.Handler
// when the handler needs the manager first).
func Listen(name, addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s listen %s: %w", name, addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols),
		ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true) // gRPC clients reach their app as HTTP/2
	return &Server{Name: name, Listener: ln, Server: srv, ShutdownTimeout: 30 * time.Second}, nil
}

// URL is http://<bound address>.
func (s *Server) URL() string { return "http://" + s.Listener.Addr().String() }

// Start serves until ctx ends, then drains.
func (s *Server) Start(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Server.Serve(s.Listener) }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s server: %w", s.Name, err)
	case <-ctx.Done():
	}
	s.draining.Store(true)
	if s.QuietPeriod > 0 {
		slog.Info("Draining: still serving while endpoints forget this replica", "server", s.Name, "for", s.QuietPeriod)
		time.Sleep(s.QuietPeriod)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), s.ShutdownTimeout)
	defer cancel()
	err := s.Server.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		s.Server.Close()
		return fmt.Errorf("%s server: requests still running after %s", s.Name, s.ShutdownTimeout)
	}
	if serveErr := <-errc; !errors.Is(serveErr, http.ErrServerClosed) {
		return errors.Join(err, serveErr)
	}
	return err
}

// NeedLeaderElection is false: every replica serves.
func (s *Server) NeedLeaderElection() bool { return false }

// ReadyCheck fails once draining starts, for the manager's /readyz.
func (s *Server) ReadyCheck(*http.Request) error {
	if s.draining.Load() {
		return fmt.Errorf("%s is draining", s.Name)
	}
	return nil
}
