// Command ignoreterm is an app that ignores SIGTERM, as many do: it keeps
// answering until it is killed. The graceful-replacement journey replaces
// its replicas under load and expects no failed request.
package main

import (
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signal.Ignore(syscall.SIGTERM)
	version := os.Getenv("VERSION")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "still here %s\n", version) })
	if err := http.ListenAndServe(":"+os.Getenv("PORT"), nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
