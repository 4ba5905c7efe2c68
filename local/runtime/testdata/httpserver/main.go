// Command httpserver is the app of the runtime's tests: it serves on $PORT
// (or $LISTEN_PORT, as an app that ignores PORT) of $LISTEN_HOST (default
// 127.0.0.1), answers / with its HOSTNAME and
// GREETING, /healthz with 200, /files/<path> with a file (see below),
// /whoami with who and where it runs (see below), and
// exits cleanly on SIGTERM (unless IGNORE_SIGTERM is set). With ALLOCATE_MIB it first allocates and
// touches that much memory, and keeps it, as an app over its memory limit
// does.
package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

// held keeps ALLOCATE_MIB's memory alive.
var held []byte

func main() {
	if mib, err := strconv.Atoi(os.Getenv("ALLOCATE_MIB")); err == nil {
		held = make([]byte, mib<<20)
		for i := range held {
			held[i] = 1
		}
		log.Printf("allocated %d MiB", mib)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s: %s\n", os.Getenv("HOSTNAME"), os.Getenv("GREETING"))
	})
	// /files/<absolute path>: GET answers the file's content with its
	// mode in X-Mode, PUT writes the body there; errors are 500s.
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimPrefix(r.URL.Path, "/files")
		var err error
		switch r.Method {
		case http.MethodPut:
			var body []byte
			if body, err = io.ReadAll(r.Body); err == nil {
				err = os.WriteFile(path, body, 0o644)
			}
		default:
			var fi os.FileInfo
			var content []byte
			if fi, err = os.Stat(path); err == nil {
				content, err = os.ReadFile(path)
			}
			if err == nil {
				w.Header().Set("X-Mode", fmt.Sprintf("%#o", fi.Mode().Perm()))
				_, _ = w.Write(content)
				return
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	// /whoami: the process's user, groups, hostname, working directory,
	// argv[0] and HOME, one key=value a line, as Knative's runtime
	// conformance image reports them.
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		groups, _ := os.Getgroups()
		host, _ := os.Hostname()
		cwd, _ := os.Getwd()
		fmt.Fprintf(w, "uid=%d\neuid=%d\ngid=%d\negid=%d\ngroups=%v\nhostname=%s\ncwd=%s\nargv0=%s\nhome=%s\n",
			os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid(), groups, host, cwd, os.Args[0], os.Getenv("HOME"))
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("K-Probe") != "yes" {
			http.Error(w, "missing probe header", http.StatusBadRequest)
		}
	})
	srv := &http.Server{Addr: cmp.Or(os.Getenv("LISTEN_HOST"), "127.0.0.1") + ":" + cmp.Or(os.Getenv("LISTEN_PORT"), os.Getenv("PORT")), Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	if os.Getenv("IGNORE_SIGTERM") != "" {
		stop()
		signal.Ignore(syscall.SIGTERM) // only SIGKILL, after the grace period, stops it
		ctx = context.Background()
	}
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
