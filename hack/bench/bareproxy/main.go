// Command bareproxy is the pooled bare reverse proxy as a process of its
// own, the floor `make bench` puts beside knit's and Knative's
// queue-proxy processes. It links only the standard library and
// queuebench/bare, so its memory and start-up are a bare Go proxy's. It
// listens on loopback only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench/bare"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to serve on")
	upstream := flag.String("upstream", "", "URL of the app, http://127.0.0.1:PORT")
	flag.Parse()
	if err := run(*listen, *upstream); err != nil {
		fmt.Fprintln(os.Stderr, "bareproxy:", err)
		os.Exit(1)
	}
}

func run(listen, upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("-upstream %q: want http://host:port", upstream)
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %w", listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-listen %q: want a loopback address", listen)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: bare.NewPooled(u), ReadHeaderTimeout: time.Minute, Protocols: bare.Protocols()}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
