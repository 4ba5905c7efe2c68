package controlplane

import (
	"fmt"
	"net/url"
	"strconv"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// contextName names the cluster, user and context in the kubeconfig.
const contextName = "knit"

// restConfig is the admin's connection: the API URL, trust in the CA and
// the admin token.
func restConfig(apiURL string, caPEM []byte, token string) *rest.Config {
	return &rest.Config{
		Host:            apiURL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: caPEM},
	}
}

// writeKubeconfig writes cfg as a kubeconfig with one context, so
// `kubectl --kubeconfig` and any client-go program reach the same API as
// knit dev. The file holds the token and is written owner-only.
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[contextName] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
	}
	kc.AuthInfos[contextName] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	kc.CurrentContext = contextName
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encode kubeconfig: %w", err)
	}
	if err := writeSecret(path, data); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}

// previousAPIPort is the API port in the kubeconfig of an earlier run, or 0.
func previousAPIPort(path string) int {
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return 0
	}
	cluster, ok := kc.Clusters[contextName]
	if !ok {
		return 0
	}
	u, err := url.Parse(cluster.Server)
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0
	}
	return port
}
