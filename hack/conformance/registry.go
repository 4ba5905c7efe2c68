package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/registry"
)

// testImages serves a registry on loopback for the run and pushes the
// suite's test images to it, each binary of dir packed by imgbuild as ko
// packs it (the binary at /ko-app/<name>, its entrypoint, a nonroot user
// 65532): knit dev then pulls and runs them as a kubelet would on a
// cluster. It returns the suite's image template and the registry's stop.
func testImages(ctx context.Context, dir, imgbuild string) (template string, stop func(), err error) {
	if dir == "" || imgbuild == "" {
		return "", nil, errors.New("mode dev needs -images (the suite's test binaries) and -imgbuild")
	}
	bins, err := os.ReadDir(dir)
	if err != nil {
		return "", nil, fmt.Errorf("test images: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go func() { _ = srv.Serve(ln) }()
	stop = func() { _ = srv.Close() }
	host := ln.Addr().String()
	for _, b := range bins {
		name := b.Name()
		ref := fmt.Sprintf("%s/conformance/%s:%s", host, name, release)
		cmd := exec.CommandContext(ctx, imgbuild, "-push", "-insecure", "-ref", ref,
			"-file", filepath.Join(dir, name)+":/ko-app/"+name, "-entrypoint", "/ko-app/"+name,
			"-env", "KO_DATA_PATH=/var/run/ko", "-port", "8080")
		if out, err := cmd.CombinedOutput(); err != nil {
			stop()
			return "", nil, fmt.Errorf("push %s: %w: %s", ref, err, strings.TrimSpace(string(out)))
		}
	}
	return fmt.Sprintf("%s/conformance/{{.Name}}:%s", host, release), stop, nil
}
