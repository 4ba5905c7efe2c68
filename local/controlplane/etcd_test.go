//go:build !unit

package controlplane

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Any local process could read every Secret from an etcd on plain HTTP:
// the store must answer only the holder of the state directory's client
// certificate.
func TestEtcdAnswersOnlyItsClientCertificate(t *testing.T) {
	state := t.TempDir()
	cp := start(t, state, binDir(t))
	if !strings.HasPrefix(cp.etcdURL, "https://127.0.0.1:") {
		t.Fatalf("etcd listens on %s, want https on loopback", cp.etcdURL)
	}
	rangeURL := cp.etcdURL + "/v3/kv/range"
	body := `{"key":"L3JlZ2lzdHJ5L3NlY3JldHM=","range_end":"L3JlZ2lzdHJ5L3NlY3JldHQ="}` // /registry/secrets…

	plain := strings.Replace(rangeURL, "https://", "http://", 1)
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Post(plain, "application/json", strings.NewReader(body)); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP to etcd answered %s", resp.Status)
		}
	}
	noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // an attacker's client
	if resp, err := noCert.Post(rangeURL, "application/json", strings.NewReader(body)); err == nil {
		resp.Body.Close()
		t.Errorf("TLS without a client certificate reached etcd: %s", resp.Status)
	}

	withCert, err := etcdPKIIn(state).httpClient() // the API server's certificate, in the state directory

	if err != nil {
		t.Fatal(err)
	}
	resp, err := withCert.Post(rangeURL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("etcd refused the API server's kind of client certificate: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("etcd with a client certificate: %s", resp.Status)
	}
}
