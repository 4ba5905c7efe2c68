package dev

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// banner is what knit dev tells the user once everything answers: where
// each piece listens and the one kubectl line to copy.
type banner struct {
	API, Kubeconfig, Webhooks, Ingress, Git string
	CRDs                                    int
}

// ReadyLine starts the banner; scripts and tests wait for it.
const ReadyLine = "knit dev is running"

func printBanner(w io.Writer, b banner) {
	kubeconfig := b.Kubeconfig
	if abs, err := filepath.Abs(kubeconfig); err == nil && !strings.HasPrefix(kubeconfig, "/") {
		kubeconfig = abs
	}
	ingressHost := strings.TrimPrefix(b.Ingress, "http://")
	_, port, _ := strings.Cut(ingressHost, ":")
	fmt.Fprintf(w, `%s
  API server   %s  (%d CRDs installed)
  webhooks     %s
  ingress      %s  → http://<service>.<namespace>.localhost:%s
  git          %s/git/<repo>.git
  kubeconfig   %s

  export KUBECONFIG=%s
  kubectl get ksvc,cfg,rev,rt

Ctrl-C stops everything.
`, ReadyLine, b.API, b.CRDs, b.Webhooks, b.Ingress, port, b.Git, kubeconfig, kubeconfig)
}
