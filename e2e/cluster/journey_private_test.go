//go:build cluster

package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// private is the in-cluster side of Routes: every Route's name resolves,
// through the cluster's DNS and its placeholder Service, to the ingress's
// internal listener, which answers it; a cluster-local Service answers
// there and nowhere else, and the public ingress never answers an
// in-cluster name.
func (j *journey) private(t *testing.T) {
	j.apply(strings.Replace(helloService("private"), "name: hello", "name: secret\n  labels:\n    networking.knative.dev/visibility: cluster-local", 1))
	j.waitServiceReady(ns, "secret", "", 3*time.Minute)
	dns := j.clusterDNS(t)
	// hello is split 50/50 by the step before, its tag old on the first
	// revision: the tag's own placeholder answers alone.
	for _, tc := range []struct{ host, want string }{
		{"hello." + ns + ".svc.cluster.local", ""},
		{"old-hello." + ns + ".svc.cluster.local", "Hello cluster!"},
		{"secret." + ns + ".svc.cluster.local", "Hello private!"},
	} {
		j.waitFor(tc.host+" answers inside the cluster", time.Minute, func(ctx context.Context) (bool, string) {
			addrs, err := dns.LookupHost(ctx, tc.host)
			if err != nil || len(addrs) == 0 {
				return false, fmt.Sprintf("resolve %s: %v", tc.host, err)
			}
			code, body, err := j.get(net.JoinHostPort(addrs[0], "80"), tc.host)
			return err == nil && code == http.StatusOK && (body == tc.want || tc.want == "" && strings.HasPrefix(body, "Hello ")), fmt.Sprintf("%s → %s: %d %q %v", tc.host, addrs[0], code, body, err)
		})
		if code, body, err := j.get(j.ingress, tc.host); err != nil || code != http.StatusNotFound {
			t.Errorf("%s through the public ingress: %d %q %v, want 404", tc.host, code, body, err)
		}
	}
	if code, body, err := j.get(j.ingress, j.host("secret")); err != nil || code != http.StatusNotFound {
		t.Errorf("the cluster-local Service's would-be public host: %d %q %v, want 404", code, body, err)
	}
	j.must("kubectl", "delete", "ksvc", "secret", "-n", ns, "--wait")
}

// clusterDNS is a resolver asking the cluster's DNS (kube-dns's
// ClusterIP, which the host routes to the node) over TCP.
func (j *journey) clusterDNS(t *testing.T) *net.Resolver {
	svc := &corev1.Service{}
	if err := j.c.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: "kube-dns"}, svc); err != nil {
		t.Fatal(err)
	}
	server := net.JoinHostPort(svc.Spec.ClusterIP, "53")
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", server)
	}}
}
