package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// knitDevReady is the line knit dev prints once it serves (local/dev's
// ReadyLine; this module cannot import knit's).
const knitDevReady = "knit dev is running"

// target is the knit the suite runs against, as the suite's flags and
// environment name it.
type target struct {
	kubeconfig string
	// endpoint is where the suite's requests go (its --ingressendpoint);
	// the gateway Service's port 80 names the port there (its nodePort).
	endpoint               string
	gatewayNS, gatewayName string
	gatewayPort            int32 // mode dev: the nodePort prepare gives the gateway Service
	imageTemplate          string
	stop                   func()
}

func startTarget(ctx context.Context, o options) (*target, error) {
	switch o.mode {
	case "dev":
		return startDev(ctx, o)
	case "cluster":
		if o.kubeconfig == "" || o.ingress == "" || o.imageTemplate == "" {
			return nil, errors.New("mode cluster needs -kubeconfig, -ingress (the node's IP) and -image-template")
		}
		return &target{
			kubeconfig: o.kubeconfig, endpoint: o.ingress,
			gatewayNS: "knit-system", gatewayName: "knit-ingress",
			imageTemplate: o.imageTemplate, stop: func() {},
		}, nil
	}
	return nil, fmt.Errorf("mode %q is neither dev nor cluster", o.mode)
}

// startDev starts knit dev with its state under o.work, in this module's
// directory (ko:// images resolve there), its ingress on o.ingress.
func startDev(ctx context.Context, o options) (*target, error) {
	if o.knit == "" || o.binDir == "" {
		return nil, errors.New("mode dev needs -knit and -bin-dir")
	}
	if o.ingress == "" {
		o.ingress = "127.0.0.1:31080"
	}
	host, portText, err := net.SplitHostPort(o.ingress)
	if err != nil {
		return nil, fmt.Errorf("-ingress: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 30000 || port > 32767 {
		return nil, fmt.Errorf("-ingress %s: the port must be in the NodePort range 30000-32767, the suite reaches it as a gateway Service's nodePort", o.ingress)
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	imageTemplate, stopRegistry, err := testImages(ctx, o.images, o.imgbuild)
	if err != nil {
		return nil, err
	}
	state := filepath.Join(o.work, "knit-dev")
	logFile, err := os.Create(filepath.Join(o.work, "knit-dev.log"))
	if err != nil {
		return nil, err
	}
	gitAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	httpsAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.knit, "dev", "--state-dir", state, "--bin-dir", o.binDir, "--http-addr", o.ingress, "--https-addr", httpsAddr, "--git-addr", gitAddr)
	cmd.Dir = dir
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
		}
		logFile.Close()
		stopRegistry()
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		once := false
		for sc.Scan() {
			fmt.Fprintln(logFile, sc.Text())
			if !once && strings.HasPrefix(sc.Text(), knitDevReady) {
				once = true
				close(ready)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-ready:
	case err := <-exited:
		logFile.Close()
		return nil, fmt.Errorf("knit dev exited before it was ready (%v); its log: %s", err, logFile.Name())
	case <-time.After(3 * time.Minute):
		stop()
		return nil, fmt.Errorf("knit dev not ready within 3m; its log: %s", logFile.Name())
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	slog.Info("knit dev is running", "state", state, "log", logFile.Name())
	return &target{
		kubeconfig: filepath.Join(state, "kubeconfig"), endpoint: host,
		gatewayNS: "knit-conformance", gatewayName: "knit-ingress", gatewayPort: int32(port),
		imageTemplate: imageTemplate,
		stop:          stop,
	}, nil
}

// freeAddr is a loopback address nobody listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// image is the reference of one of the suite's test images.
func (t *target) image(name string) string {
	return strings.ReplaceAll(t.imageTemplate, "{{.Name}}", name)
}
