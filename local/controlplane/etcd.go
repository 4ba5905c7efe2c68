package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// etcdMember is the single-member etcd knit dev stores its objects in.
//
// It speaks TLS on both its listeners and asks every client and peer for
// a certificate signed by the state directory's CA: on loopback, any
// process of any user could otherwise read every Secret with one request
// to /v3/kv/range. Only the API server holds a client certificate, and
// the keys sit in the state directory (0600).
type etcdMember struct {
	dataDir    string
	clientPort int
	peerPort   int
	pki        etcdPKI
}

// etcdPKI are the files etcd's TLS reads, all in the state's pki dir.
type etcdPKI struct {
	caFile             string // the CA every certificate chains to
	certFile, keyFile  string // etcd's own: serving and peer client
	clientCert, client string // the API server's client certificate and key
}

func (e etcdMember) clientURL() string { return "https://127.0.0.1:" + strconv.Itoa(e.clientPort) }

// args configures a one-member cluster on loopback. The initial-* flags
// only matter the first time; later runs read membership from the data
// dir, which is why a new peer port each run is harmless.
//
// fsync is off: knit dev's real source of truth is Git, etcd's data is
// lost only if the machine (not knit) crashes, and fsync makes every write
// slow on laptop disks.
func (e etcdMember) args() []string {
	peerURL := "https://127.0.0.1:" + strconv.Itoa(e.peerPort)
	return []string{
		"--name=knit",
		"--data-dir=" + e.dataDir,
		"--listen-client-urls=" + e.clientURL(),
		"--advertise-client-urls=" + e.clientURL(),
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=knit=" + peerURL,
		"--unsafe-no-fsync=true",
		"--cert-file=" + e.pki.certFile,
		"--key-file=" + e.pki.keyFile,
		"--client-cert-auth=true",
		"--trusted-ca-file=" + e.pki.caFile,
		"--peer-cert-file=" + e.pki.certFile,
		"--peer-key-file=" + e.pki.keyFile,
		"--peer-client-cert-auth=true",
		"--peer-trusted-ca-file=" + e.pki.caFile,
	}
}

// prepareEtcdPKI writes etcd's certificate and the API server's client
// certificate, fresh on every start like the API server's own.
func prepareEtcdPKI(stateDir string, ca *CA) (etcdPKI, error) {
	pki := etcdPKIIn(stateDir)
	certPEM, keyPEM, err := ca.IssuePeerCert("127.0.0.1", "localhost")
	if err != nil {
		return etcdPKI{}, err
	}
	clientPEM, clientKeyPEM, err := ca.IssueClientCert("kube-apiserver-etcd-client")
	if err != nil {
		return etcdPKI{}, err
	}
	for path, data := range map[string][]byte{pki.keyFile: keyPEM, pki.certFile: certPEM, pki.client: clientKeyPEM, pki.clientCert: clientPEM} {
		if err := writeSecret(path, data); err != nil {
			return etcdPKI{}, fmt.Errorf("write %s: %w", filepath.Base(path), err)
		}
	}
	return pki, nil
}

// etcdPKIIn is where the files of etcdPKI live in a state directory.
func etcdPKIIn(stateDir string) etcdPKI {
	dir := pkiDir(stateDir)
	return etcdPKI{
		caFile:   filepath.Join(dir, "ca.crt"),
		certFile: filepath.Join(dir, "etcd.crt"), keyFile: filepath.Join(dir, "etcd.key"),
		clientCert: filepath.Join(dir, "apiserver-etcd-client.crt"), client: filepath.Join(dir, "apiserver-etcd-client.key"),
	}
}

// httpClient is a client with the API server's etcd certificate.
func (p etcdPKI) httpClient() (*http.Client, error) {
	cert, err := tls.LoadX509KeyPair(p.clientCert, p.client)
	if err != nil {
		return nil, fmt.Errorf("load etcd client certificate: %w", err)
	}
	caPEM, err := os.ReadFile(p.caFile)
	if err != nil {
		return nil, fmt.Errorf("read CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s holds no certificate", p.caFile)
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}, nil
}

// probe asks etcd's /health endpoint, which answers true once the member
// has a leader and serves reads.
func (e etcdMember) probe(ctx context.Context) error {
	client, err := e.pki.httpClient()
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.clientURL()+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("etcd /health: %s %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
