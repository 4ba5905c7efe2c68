// Command caller is a frontend for knit's end-to-end tests: GET /?url=U
// fetches U from inside its replica and answers with U's status and
// body, as a frontend calling a backend Service by name would.
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	client := &http.Client{Timeout: 10 * time.Second}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		target := r.URL.Query().Get("url")
		if target == "" {
			http.Error(w, "caller: ?url= names what to call", http.StatusBadRequest)
			return
		}
		resp, err := client.Get(target)
		if err != nil {
			http.Error(w, "caller: "+err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		fmt.Fprintf(w, "%d %s", resp.StatusCode, body)
	})
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	log.Fatal(http.ListenAndServe(":"+port, nil))
}
