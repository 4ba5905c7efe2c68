package podlogs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Options configure a Server.
type Options struct {
	Source Source
	// Cert is the serving certificate, for 127.0.0.1, of the CA the API
	// server's --kubelet-certificate-authority names.
	Cert tls.Certificate
	// ClientCAs verify client certificates; ClientCN is the one name
	// accepted, the API server's kubelet client's.
	ClientCAs *x509.CertPool
	ClientCN  string
	Log       logr.Logger
	// Poll is how often follow looks for more of a file. Default 200ms.
	Poll time.Duration
}

// Server is knit dev's kubelet log endpoint.
type Server struct {
	opts Options
	srv  *http.Server
}

// New makes a Server; Serve runs it.
func New(opts Options) *Server {
	if opts.Poll <= 0 {
		opts.Poll = 200 * time.Millisecond
	}
	s := &Server{opts: opts}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		// Refused handshakes (a client without the kubelet client
		// certificate) are worth a line in knit dev's log, not stderr.
		ErrorLog: slog.NewLogLogger(logr.ToSlogHandler(opts.Log), slog.LevelInfo),
		TLSConfig: &tls.Config{
			MinVersion:            tls.VersionTLS12,
			Certificates:          []tls.Certificate{opts.Cert},
			ClientAuth:            tls.RequireAndVerifyClientCert,
			ClientCAs:             opts.ClientCAs,
			VerifyPeerCertificate: s.verifyClient,
		},
	}
	return s
}

// Listen opens 127.0.0.1:port (0: any free port): loopback only, where the
// Node's InternalIP points.
func Listen(port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, fmt.Errorf("kubelet log endpoint: %w", err)
	}
	return ln, nil
}

// Serve answers on ln until ctx ends, then closes it; followers are cut.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.srv.BaseContext = func(net.Listener) context.Context { return ctx }
	go func() {
		<-ctx.Done()
		_ = s.srv.Close()
	}()
	err := s.srv.ServeTLS(ln, "", "")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("kubelet log endpoint: %w", err)
}

// verifyClient accepts the API server's kubelet client certificate only:
// knit dev's CA signs other client certificates too.
func (s *Server) verifyClient(_ [][]byte, chains [][]*x509.Certificate) error {
	for _, chain := range chains {
		if len(chain) > 0 && chain[0].Subject.CommonName == s.opts.ClientCN {
			return nil
		}
	}
	return fmt.Errorf("client certificate is not %q", s.opts.ClientCN)
}

// ServeHTTP answers GET /containerLogs/{namespace}/{pod}/{container}.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) != 4 || parts[0] != "containerLogs" || parts[1] == "" || parts[2] == "" || parts[3] == "" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.containerLogs(w, r, parts[1], parts[2], parts[3])
}

func (s *Server) containerLogs(w http.ResponseWriter, r *http.Request, namespace, pod, container string) {
	o, err := parseOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	l, err := s.opts.Source.ContainerLog(namespace, pod, container, o.previous)
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	f, err := openLog(l, pod, container)
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	var flush func()
	if f, ok := w.(http.Flusher); ok && o.follow {
		flush = f.Flush
		flush() // the headers: kubectl -f waits for them
	}
	if err := copyLog(r.Context(), w, flush, f, l, o, s.opts.Poll); err != nil && r.Context().Err() == nil {
		s.opts.Log.Error(err, "Log not served", "namespace", namespace, "pod", pod, "container", container)
	}
}
