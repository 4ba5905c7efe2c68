// Command httpserver is the app of the runtime's tests: it serves on $PORT
// of $LISTEN_HOST (default 127.0.0.1), answers / with its HOSTNAME and
// GREETING, /healthz with 200, and exits cleanly on SIGTERM.
package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s: %s\n", os.Getenv("HOSTNAME"), os.Getenv("GREETING"))
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("K-Probe") != "yes" {
			http.Error(w, "missing probe header", http.StatusBadRequest)
		}
	})
	srv := &http.Server{Addr: cmp.Or(os.Getenv("LISTEN_HOST"), "127.0.0.1") + ":" + os.Getenv("PORT"), Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	log.Printf("listening on %s", srv.Addr)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
