// Command knit-builder is the entrypoint of the knit-toolchain image: it
// builds one ko:// image of one commit inside a build Job that knit's
// controller created (package gitsync/build in knit's module), and pushes
// it to the operator's registry. The Job runs each step in a container of
// its own (--step), so that the one that compiles the user's code holds
// no credential:
//
//  1. cache: creates the namespace's directory on the cache claim;
//  2. fetch: fetches exactly the commit with the git CLI (credentials
//     from $GIT_USERNAME/$GIT_PASSWORD or $GIT_BEARERTOKEN, passed to git
//     through its environment, never its arguments; for an SSH URL, the
//     deploy key and known_hosts from $GIT_SSH_*, with knit-builder itself
//     as git's SSH client, $GIT_SSH);
//  3. compile: runs `go build -trimpath -buildvcs=false -- <package>`, so
//     the binary depends on the tree alone, as ko builds it, and the
//     package is never read as a flag;
//  4. push: packs the binary at /ko-app/<name> onto an empty base with
//     the CA bundle (package pack: fixed timestamps, so equal binaries
//     give equal digests) and pushes it (credentials from $DOCKER_CONFIG).
//     It only reads the binary, as a regular file inside the workspace.
//
// Without --step it runs fetch, compile and push in one process (tests,
// by hand). The registry is never asked whether a key was built: the
// controller records what each key built and trusts only that.
//
// Its outcome is each container's termination message, the JSON the
// controller reads (gitsync/build.Result); its output, the Job's logs, is
// the git and go output a user reads when a build fails.
//
// It lives in the hack/images module because it links go-containerregistry,
// which stays out of knit's module graph.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getenv(envSSHClient) == "1" { // git's transport, see gitEnv
		os.Exit(sshCommand(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if socket := os.Getenv(envNetnsChild); socket != "" { // rootlesskit's command, see egress.go
		os.Exit(netnsChild(socket, os.Args[1:], os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fl := flag.NewFlagSet("knit-builder", flag.ContinueOnError)
	var o options
	o.register(fl)
	if err := fl.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	res := build(ctx, o, os.Stdout)
	if err := writeResult(o.terminationLog, res); err != nil {
		fmt.Fprintln(os.Stderr, "knit-builder: write the result:", err)
	}
	if res.Error != "" {
		fmt.Fprintln(os.Stdout, "build failed:", res.Error)
		os.Exit(1)
	}
	if res.Image != "" {
		fmt.Fprintln(os.Stdout, "pushed", res.Image)
	}
}

// result is gitsync/build.Result in knit's module: the contract between
// the builder and the controller.
type result struct {
	Image   string `json:"image,omitempty"`
	Error   string `json:"error,omitempty"`
	Fetch   string `json:"fetch,omitempty"`
	Compile string `json:"compile,omitempty"`
	Build   string `json:"build,omitempty"`
	Push    string `json:"push,omitempty"`
	Reused  bool   `json:"reused,omitempty"`
}

// maxMessage is the kubelet's limit on a termination message.
const maxMessage = 4096

// writeResult writes r as JSON to path, its error cut to fit the limit.
func writeResult(path string, r result) error {
	for {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if len(b) <= maxMessage || len(r.Error) < 64 {
			return writeFile(path, b)
		}
		r.Error = r.Error[:len(r.Error)-(len(b)-maxMessage)-16] + "…"
	}
}

func writeFile(path string, b []byte) error {
	if path == "-" {
		_, err := os.Stdout.Write(append(b, '\n'))
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// logf prints one progress line to the Job's log.
func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "knit-builder: "+format+"\n", args...)
}
