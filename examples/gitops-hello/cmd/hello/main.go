// Command hello is the app of knit's GitOps example: its source lives in
// the same repository as its manifests, so `git push` deploys code and
// configuration together. It answers "Hello $TARGET!" on $PORT.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
)

func main() {
	target := os.Getenv("TARGET")
	if target == "" {
		target = "World"
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Hello %s!\n", target)
	})
	log.Printf("hello listening on :%s", port)
	log.Fatal(http.ListenAndServe(":"+port, nil))
}
