package platform

import (
	"context"
	"crypto/tls"
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
	// tls serves over TLS (ListenTLS). Not read off Server.TLSConfig,
	// which net/http fills in for a plain server that enables HTTP/2.
	tls bool
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

// ListenTLS binds addr for a Server serving h over TLS with cfg (its
// GetCertificate picks a certificate per handshake): HTTP/1.1, and
// HTTP/2 for clients that offer it by ALPN.
func ListenTLS(name, addr string, h http.Handler, cfg *tls.Config) (*Server, error) {
	s, err := Listen(name, addr, h)
	if err != nil {
		return nil, err
	}
	s.tls = true
	s.Server.TLSConfig = cfg
	s.Server.Protocols = new(http.Protocols)
	s.Server.Protocols.SetHTTP1(true)
	s.Server.Protocols.SetHTTP2(true)
	return s, nil
}

// URL is http://<bound address>, or https:// for a ListenTLS server.
func (s *Server) URL() string {
	if s.tls {
		return "https://" + s.Listener.Addr().String()
	}
	return "http://" + s.Listener.Addr().String()
}

// serve runs the server on its listener, over TLS for ListenTLS.
func (s *Server) serve() error {
	if s.tls {
		return s.Server.ServeTLS(s.Listener, "", "")
	}
	return s.Server.Serve(s.Listener)
}

// Start serves until ctx ends, then drains.
func (s *Server) Start(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.serve() }()
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
