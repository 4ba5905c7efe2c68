package dev

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// listener is one of knit dev's loopback HTTP endpoints. Binding happens
// before the control plane starts so a busy port fails in a second, not
// after a minute of startup.
type listener struct {
	name string
	ln   net.Listener
	srv  *http.Server
}

func listen(name, addr string, h http.Handler) (*listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s address %s: %w (pick another with --%s-addr)", name, addr, err, name)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true) // h2c: gRPC clients through the ingress
	return &listener{name: name, ln: ln, srv: srv}, nil
}

// URL is where users reach the listener.
func (l *listener) URL() string { return "http://" + l.ln.Addr().String() }

func (l *listener) serve(errc chan<- error) {
	go func() {
		if err := l.srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("%s server: %w", l.name, err)
		}
	}()
}

func (l *listener) shutdown(ctx context.Context) error {
	return l.srv.Shutdown(ctx)
}

// noRoutes answers every request while nothing is deployed behind the
// listener: a 404 with a body that says what was asked for.
func noRoutes(what string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "knit: no %s for %s%s\n", what, r.Host, r.URL.Path)
	})
}
