package dev

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"strings"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/local/controlplane"
	"github.com/knitops/knit/local/podlogs"
	"github.com/knitops/knit/local/runtime"
)

// podLogSources answers the log endpoint: build pods from the build
// runner, every other Pod from the runtime.
type podLogSources struct {
	runtime podlogs.Source
	builds  podlogs.Source
}

func (s podLogSources) ContainerLog(namespace, pod, container string, previous bool) (podlogs.Log, error) {
	if namespace == config.SystemNamespace && strings.HasPrefix(pod, buildPodPrefix) {
		return s.builds.ContainerLog(namespace, pod, container, previous)
	}
	return s.runtime.ContainerLog(namespace, pod, container, previous)
}

// startKubeletLogs makes `kubectl logs` work against knit dev's own API
// server: it serves the kubelet's log endpoint (package podlogs) on
// loopback until ctx ends, publishes knit dev's Node with its port, and
// turns on the build runner's mirror pods. Against another API server
// (--kubeconfig) there is none of this: that server's kubelet client is
// not knit dev's to trust, and its nodes are not this machine.
func startKubeletLogs(ctx context.Context, cp *controlplane.ControlPlane, c client.Client, rt *runtime.Runtime, builds *dockerfileBuilds, log logr.Logger) error {
	log = log.WithName("kubelet-logs")
	identity, allocatable := rt.Node()
	builds.pods = newBuildPods(c, identity.Name, builds.logFile, log.WithName("build-pods"))
	srv, err := logServer(cp, podLogSources{runtime: rt, builds: builds.pods}, log)
	if err != nil {
		return err
	}
	ln, err := podlogs.Listen(0)
	if err != nil {
		return err
	}
	go func() {
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error(err, "Log endpoint stopped")
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	spec := podlogs.NodeSpec{Name: identity.Name, Labels: identity.Labels, Taints: identity.Taints, Allocatable: allocatable.List(), Port: int32(port)}
	if err := podlogs.PublishNode(ctx, c, spec); err != nil {
		return fmt.Errorf("kubectl logs: %w", err)
	}
	go builds.pods.collect(ctx) // an earlier knit dev's
	log.V(1).Info("Serving the kubelet's log endpoint", "address", ln.Addr().String(), "node", identity.Name)
	return nil
}

// logServer is the endpoint with a serving certificate of the control
// plane's CA, which the API server's --kubelet-certificate-authority names,
// accepting the API server's kubelet client certificate alone.
func logServer(cp *controlplane.ControlPlane, src podlogs.Source, log logr.Logger) (*podlogs.Server, error) {
	certPEM, keyPEM, err := cp.IssueServingCert("127.0.0.1")
	if err != nil {
		return nil, fmt.Errorf("log endpoint certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("log endpoint certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cp.CAPEM()) {
		return nil, fmt.Errorf("log endpoint: control plane CA is not PEM")
	}
	return podlogs.New(podlogs.Options{Source: src, Cert: cert, ClientCAs: pool, ClientCN: controlplane.KubeletClientCN, Log: log}), nil
}
