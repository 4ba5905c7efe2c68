package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ControlPlane is a running etcd and kube-apiserver pair. Stop it when
// done; its state stays in the state directory for the next Start.
type ControlPlane struct {
	ca         *CA
	config     *rest.Config
	kubeconfig string
	etcdURL    string // https, client certificates only
	etcd       *process
	apiserver  *process
	controller *process // kube-controller-manager: garbage collection, namespace deletion

	stopOnce sync.Once
	stopErr  error
}

// Start brings up etcd and then kube-apiserver and returns once /readyz
// answers, with a kubeconfig written to <StateDir>/kubeconfig. ctx bounds
// the startup only: the processes run until Stop (or until knit exits).
// On any failure, whatever was started is stopped again.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	logger := log.FromContext(ctx).WithName("controlplane")
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	for _, dir := range []string{opts.StateDir, opts.LogDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	cp := &ControlPlane{kubeconfig: filepath.Join(opts.StateDir, "kubeconfig")}
	defer func() {
		if err != nil {
			err = errors.Join(err, cp.Stop())
		}
	}()

	apiPort, etcdPorts, err := pickPorts(opts.APIPort, cp.kubeconfig)
	if err != nil {
		return nil, err
	}
	etcd := etcdMember{dataDir: filepath.Join(opts.StateDir, "etcd"), clientPort: etcdPorts[0], peerPort: etcdPorts[1]}
	// Keys and certificates first: a broken pki dir fails before anything runs.
	api, err := prepareAPIServer(opts.StateDir, apiPort, etcd.clientURL())
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver: %w", err)
	}
	if etcd.pki, err = prepareEtcdPKI(opts.StateDir, api.ca); err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	api.server.etcd = etcd.pki
	cp.ca, cp.config, cp.etcdURL = api.ca, api.config, etcd.clientURL()
	logger.Info("Starting etcd", "dataDir", etcd.dataDir, "url", etcd.clientURL())
	if cp.etcd, err = startProcess("etcd", opts.binary("etcd"), etcd.args(), filepath.Join(opts.LogDir, "etcd.log")); err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	if err := waitReady(ctx, cp.etcd, etcd.probe); err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}

	logger.Info("Starting kube-apiserver", "url", cp.config.Host)
	if cp.apiserver, err = startProcess("kube-apiserver", opts.binary("kube-apiserver"), api.server.args(), filepath.Join(opts.LogDir, "kube-apiserver.log")); err != nil {
		return nil, fmt.Errorf("start kube-apiserver: %w", err)
	}
	probe, err := readyzProbe(cp.config)
	if err != nil {
		return nil, fmt.Errorf("start kube-apiserver: %w", err)
	}
	if err := waitReady(ctx, cp.apiserver, probe); err != nil {
		return nil, fmt.Errorf("start kube-apiserver: %w", err)
	}
	if err := writeKubeconfig(cp.kubeconfig, cp.config); err != nil {
		return nil, err
	}
	// No wait: the garbage collector and namespace controller catch up on
	// their own, and nothing knit does at startup depends on them.
	logger.Info("Starting kube-controller-manager", "controllers", ownedControllers)
	if cp.controller, err = startProcess("kube-controller-manager", opts.binary("kube-controller-manager"),
		controllerManagerArgs(cp.kubeconfig), filepath.Join(opts.LogDir, "kube-controller-manager.log")); err != nil {
		return nil, fmt.Errorf("start kube-controller-manager: %w", err)
	}
	logger.Info("Control plane ready", "url", cp.config.Host, "kubeconfig", cp.kubeconfig, "took", time.Since(began).Round(time.Millisecond))
	return cp, nil
}

// pickPorts chooses the API port (explicit, else the previous run's when
// free, else any) and two free ports for etcd's client and peer URLs.
func pickPorts(explicit int, kubeconfig string) (api int, etcd []int, err error) {
	want := explicit
	if want == 0 {
		want = previousAPIPort(kubeconfig)
	}
	ports, err := reservePorts(want, 0, 0)
	if err != nil && explicit == 0 && want != 0 {
		ports, err = reservePorts(0, 0, 0) // the previous port is taken now
	}
	if err != nil {
		return 0, nil, fmt.Errorf("reserve loopback ports: %w", err)
	}
	return ports[0], ports[1:], nil
}

// preparedAPIServer is everything kube-apiserver needs on disk, and the
// admin connection to it.
type preparedAPIServer struct {
	server apiServer
	ca     *CA
	config *rest.Config
}

// prepareAPIServer loads or creates the lasting credentials (CA, admin
// token, service-account key) and writes a fresh serving certificate.
func prepareAPIServer(stateDir string, port int, etcdURL string) (*preparedAPIServer, error) {
	ca, err := LoadOrCreateCA(stateDir)
	if err != nil {
		return nil, err
	}
	token, err := loadOrCreateToken(stateDir)
	if err != nil {
		return nil, err
	}
	saKey, saPub, err := serviceAccountKeys(stateDir)
	if err != nil {
		return nil, err
	}
	dir := pkiDir(stateDir)
	srv := apiServer{
		port:      port,
		etcdURL:   etcdURL,
		certFile:  filepath.Join(dir, "apiserver.crt"),
		keyFile:   filepath.Join(dir, "apiserver.key"),
		tokenFile: filepath.Join(dir, "tokens.csv"),
		saKey:     saKey,
		saPub:     saPub,
	}
	certPEM, keyPEM, err := ca.IssueServingCert("127.0.0.1", "localhost")
	if err != nil {
		return nil, err
	}
	if err := writeSecret(srv.keyFile, keyPEM); err != nil {
		return nil, fmt.Errorf("write serving key: %w", err)
	}
	if err := writeSecret(srv.certFile, certPEM); err != nil {
		return nil, fmt.Errorf("write serving certificate: %w", err)
	}
	if err := writeTokenFile(srv.tokenFile, token); err != nil {
		return nil, err
	}
	if srv.kubelet, err = prepareKubeletPKI(stateDir, ca); err != nil {
		return nil, err
	}
	apiURL := "https://127.0.0.1:" + strconv.Itoa(port)
	return &preparedAPIServer{server: srv, ca: ca, config: restConfig(apiURL, ca.CAPEM(), token)}, nil
}

// Stop ends kube-controller-manager, kube-apiserver, then etcd, so the API never writes to a
// stopped store: SIGTERM, a bounded wait, then SIGKILL. Calling it again
// returns the first result.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		var errs []error
		for _, p := range []*process{cp.controller, cp.apiserver, cp.etcd} {
			if p == nil {
				continue
			}
			if err := p.stop(stopTimeout); err != nil {
				errs = append(errs, fmt.Errorf("stop %s: %w", p.name, err))
			}
		}
		cp.stopErr = errors.Join(errs...)
	})
	return cp.stopErr
}

// RESTConfig is a fresh copy of the admin connection, for clients and
// controller managers inside knit dev.
func (cp *ControlPlane) RESTConfig() *rest.Config { return rest.CopyConfig(cp.config) }

// KubeconfigPath is the kubeconfig Start wrote, for kubectl and the user.
func (cp *ControlPlane) KubeconfigPath() string { return cp.kubeconfig }

// APIURL is where the API server listens, https://127.0.0.1:<port>.
func (cp *ControlPlane) APIURL() string { return cp.config.Host }

// CAPEM is the CA that signed the API server's certificate and signs
// IssueServingCert's, for webhook registrations' caBundle.
func (cp *ControlPlane) CAPEM() []byte { return cp.ca.CAPEM() }

// IssueServingCert signs a serving certificate for hosts with the control
// plane's CA, so the API server trusts knit dev's admission webhooks.
func (cp *ControlPlane) IssueServingCert(hosts ...string) (certPEM, keyPEM []byte, err error) {
	return cp.ca.IssueServingCert(hosts...)
}
