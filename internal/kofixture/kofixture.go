// Package kofixture is the Go app the in-cluster build journeys push: a
// repository whose Service runs ko://./cmd/hello, and a GOPROXY that
// serves its one dependency and counts what it serves, so a journey can
// tell a cold build (it downloads) from a warm one (it does not). Shared
// by the cluster journey (e2e/cluster) and make bench.
package kofixture

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// Dependency is the module the app imports.
const Dependency = "github.com/google/go-cmp@v0.7.0"

// Answer is what the app answers for greeting.
func Answer(greeting string) string { return "Hello " + greeting + "! true" }

// BrokenError is the compiler's complaint about the broken app.
const BrokenError = "undefined: undefinedGreeting"

// WriteApp writes the app into dir: ./cmd/hello greets greeting on $PORT
// using go-cmp, and a Service named service runs it as ko://./cmd/hello.
// broken writes code that does not compile.
func WriteApp(dir, service, greeting string, broken bool) error {
	body := fmt.Sprintf(`fmt.Fprintln(w, "Hello %s!", cmp.Equal(1, 1))`, greeting)
	if broken {
		body = `fmt.Fprintln(w, undefinedGreeting)`
	}
	files := map[string]string{
		"go.mod": "module example.com/hello\n\ngo 1.22\n\nrequire github.com/google/go-cmp v0.7.0\n",
		"go.sum": "github.com/google/go-cmp v0.7.0 h1:wk8382ETsv4JYUZwIsn6YpYiWiBsYLSJiTsyBybVuN8=\n" +
			"github.com/google/go-cmp v0.7.0/go.mod h1:pXiqmnSA92OHEEa9HXL2W4E7lf9JzCmGVUdgjX3N/iU=\n",
		"cmd/hello/main.go": `package main

import (
	"fmt"
	"net/http"
	"os"

	"github.com/google/go-cmp/cmp"
)

func main() {
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		` + body + `
	})
	_ = http.ListenAndServe(":"+os.Getenv("PORT"), nil)
}
`,
		"kustomization.yaml": "resources:\n  - service.yaml\n",
		"service.yaml": `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: ` + service + `
spec:
  template:
    spec:
      containers:
        - image: ko://./cmd/hello
`,
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteNonce adds a file that changes the app's tree and nothing it
// runs, so a journey's first build has a key no earlier run built.
func WriteNonce(dir, nonce string) error {
	pkg := filepath.Join(dir, "cmd", "hello")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(pkg, "nonce.go"), []byte("package main\n\n// run "+nonce+"\n"), 0o644)
}

// ModuleProxy is a GOPROXY (Go's module cache layout is the protocol) in
// front of a module cache holding Dependency, counting its requests.
type ModuleProxy struct {
	// URL is the proxy's http://address.
	URL      string
	srv      *http.Server
	requests atomic.Int64
}

// StartModuleProxy fills a module cache under dir with Dependency offline,
// from this machine's module cache, and serves it on addr (host:port; a
// port of 0 picks one).
func StartModuleProxy(addr, dir string) (*ModuleProxy, error) {
	local, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	modcache := filepath.Join(dir, "modcache")
	dl := exec.Command("go", "mod", "download", Dependency)
	dl.Dir = dir
	dl.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOFLAGS=-mod=mod", "GOSUMDB=off",
		"GOPROXY=file://"+filepath.Join(strings.TrimSpace(string(local)), "cache", "download"))
	if out, err := dl.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go mod download %s: %w\n%s", Dependency, err, out)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &ModuleProxy{URL: "http://" + ln.Addr().String()}
	files := http.FileServer(http.Dir(filepath.Join(modcache, "cache", "download")))
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		files.ServeHTTP(w, r)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Requests is how many requests the proxy answered.
func (p *ModuleProxy) Requests() int64 { return p.requests.Load() }

// Close stops the proxy.
func (p *ModuleProxy) Close() error { return p.srv.Close() }
