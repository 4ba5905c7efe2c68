package controlplane

import (
	"fmt"
	"path/filepath"
)

// KubeletClientCN is the common name of the client certificate the API
// server presents to kubelets, here knit dev's log endpoint. The CA that
// signs it signs other client certificates too (etcd's), so the endpoint
// accepts this name and no other.
const KubeletClientCN = "kube-apiserver-kubelet-client"

// kubeletPKI is how the API server reaches a kubelet: with a client
// certificate of its own, trusting serving certificates of knit dev's CA.
type kubeletPKI struct {
	clientCert, clientKey string
	caFile                string
}

// prepareKubeletPKI writes a fresh kubelet client certificate; the CA file
// is the one LoadOrCreateCA keeps, which also signs the log endpoint's
// serving certificate (IssueServingCert).
func prepareKubeletPKI(stateDir string, ca *CA) (kubeletPKI, error) {
	dir := pkiDir(stateDir)
	k := kubeletPKI{
		clientCert: filepath.Join(dir, "apiserver-kubelet-client.crt"),
		clientKey:  filepath.Join(dir, "apiserver-kubelet-client.key"),
		caFile:     filepath.Join(dir, "ca.crt"),
	}
	certPEM, keyPEM, err := ca.IssueClientCert(KubeletClientCN)
	if err != nil {
		return k, fmt.Errorf("kubelet client certificate: %w", err)
	}
	if err := writeSecret(k.clientKey, keyPEM); err != nil {
		return k, fmt.Errorf("write kubelet client key: %w", err)
	}
	if err := writeSecret(k.clientCert, certPEM); err != nil {
		return k, fmt.Errorf("write kubelet client certificate: %w", err)
	}
	return k, nil
}
