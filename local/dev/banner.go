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
	API, Kubeconfig, Webhooks, Ingress, HTTPS, Git string
	// TrustHint says where knit dev's local CA is and how to trust it.
	TrustHint string
	// Replicas says where replicas listen and who can reach them.
	Replicas string
	// Images says whether container images run, and how.
	Images string
	// GitToken is the password every push and fetch needs (any user
	// name), kept in GitTokenFile.
	GitToken, GitTokenFile string
	CRDs                   int
}

// ReadyLine starts the banner; scripts and tests wait for it.
const ReadyLine = "knit dev is running"

func printBanner(w io.Writer, b banner) {
	kubeconfig := b.Kubeconfig
	if abs, err := filepath.Abs(kubeconfig); err == nil && !strings.HasPrefix(kubeconfig, "/") {
		kubeconfig = abs
	}
	tokenFile := b.GitTokenFile
	if abs, err := filepath.Abs(tokenFile); err == nil {
		tokenFile = abs
	}
	ingressHost := strings.TrimPrefix(b.Ingress, "http://")
	_, port, _ := strings.Cut(ingressHost, ":")
	_, httpsPort, _ := strings.Cut(strings.TrimPrefix(b.HTTPS, "https://"), ":")
	gitHost := strings.TrimPrefix(b.Git, "http://")
	fmt.Fprintf(w, `%s
  API server   %s  (%d CRDs installed)
  webhooks     %s
  ingress      %s  → http://<service>.<namespace>.localhost:%s
  https        %s  → https://<service>.<namespace>.localhost:%s
  replicas     %s
  images       %s
  git          %s/git/<repo>.git  (any user name, the git token as password)
  git token    %s  (in %s)
  kubeconfig   %s

  export KUBECONFIG=%s
  kubectl get ksvc,cfg,rev,rt
  git remote add knit http://knit:%s@%s/git/<repo>.git

%s
Ctrl-C stops everything.
`, ReadyLine, b.API, b.CRDs, b.Webhooks, b.Ingress, port, b.HTTPS, httpsPort, b.Replicas, b.Images, b.Git, b.GitToken, tokenFile, kubeconfig, kubeconfig, b.GitToken, gitHost, b.TrustHint)
}
