package controlplane

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// serviceAccountIssuer names the issuer of service-account tokens. It is
// fixed, not the API URL, so tokens survive a change of port.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ServiceRange is the local API server's service range. Each Revision
// takes two ClusterIPs (its SKS's public and private Services), so the /24
// this used to be was full after about 126 Revisions; a /16 holds 65,534
// addresses, thousands of Revisions, well within the largest range the
// API server allows (a /12 for IPv4). It contains the old /24, so the
// Services of a state directory from before keep their addresses.
const ServiceRange = "10.0.0.0/16"

// apiServer is how kube-apiserver is configured; every path is in the
// state directory.
type apiServer struct {
	port      int
	etcdURL   string
	etcd      etcdPKI // the CA etcd's certificate chains to and the client certificate for it
	certFile  string  // serving certificate, signed by the CA
	keyFile   string
	tokenFile string // --token-auth-file with the admin token
	saKey     string // signs service-account tokens
	saPub     string // verifies them
	kubelet   kubeletPKI
}

// args follows envtest's configuration of the same binary, with two
// differences: the admin authenticates with a bearer token instead of a
// client certificate, and anonymous requests are refused.
//
// Authorization is RBAC, as on a cluster: knit dev's own components and
// kube-controller-manager use the admin token (system:masters, which RBAC
// lets do anything), while a replica's projected service-account token
// has only what its ServiceAccount is granted. AlwaysAllow would make
// every token the API server issues an admin token, so an app's
// /var/run/secrets token could read every Secret.
//
// The API server advertises 127.0.0.1 without publishing it as the
// endpoints of the `kubernetes` Service (the endpoint reconciler refuses
// loopback addresses, and left to itself the API server would advertise
// the host's default-route address and fail on a machine without one).
// Nothing in local mode reaches the API through that Service.
//
// The ServiceAccount admission plugin is off because nothing creates the
// default service account without kube-controller-manager; knit's local
// runtime runs replicas as processes, not pods.
func (a apiServer) args() []string {
	return []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(a.port),
		"--tls-cert-file=" + a.certFile,
		"--tls-private-key-file=" + a.keyFile,
		"--etcd-servers=" + a.etcdURL,
		"--etcd-cafile=" + a.etcd.caFile,
		"--etcd-certfile=" + a.etcd.clientCert,
		"--etcd-keyfile=" + a.etcd.client,
		"--token-auth-file=" + a.tokenFile,
		"--anonymous-auth=false",
		"--authorization-mode=RBAC",
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + a.saPub,
		"--service-account-signing-key-file=" + a.saKey,
		"--service-cluster-ip-range=" + ServiceRange,
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		// knit dev's kubelet log endpoint (package podlogs): the API server
		// proxies `kubectl logs` to the Node's InternalIP, 127.0.0.1, and
		// proves itself with a client certificate only that endpoint accepts.
		"--kubelet-client-certificate=" + a.kubelet.clientCert,
		"--kubelet-client-key=" + a.kubelet.clientKey,
		"--kubelet-certificate-authority=" + a.kubelet.caFile,
		"--kubelet-preferred-address-types=InternalIP",
		// A client's open watch (kubectl get -w, an informer of a tool
		// beside knit dev) otherwise holds the API server's exit until
		// knit kills it (stopTimeout): Ctrl-C took 15 s whenever one was
		// open. Watchers reconnect to the next knit dev anyway.
		"--shutdown-watch-termination-grace-period=1s",
	}
}

// readyzProbe asks /readyz with the admin's own client configuration, so
// ready also proves that TLS and the token work.
func readyzProbe(cfg *rest.Config) (func(context.Context) error, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s %s", resp.Status, failedChecks(string(body)))
		}
		return nil
	}, nil
}

// failedChecks keeps an error short: /readyz lists every check, and only
// the failing ones, marked [-], say what is missing.
func failedChecks(body string) string {
	var failed []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, strings.TrimPrefix(line, "[-]"))
		}
	}
	return strings.Join(failed, "; ")
}
