package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/local/nodefit"
)

// DefaultHostEnv names the variables of knit dev's own environment that
// every replica inherits, as an image's ENV would provide them: enough for
// a shell, a Go program and TLS to work, and nothing that points at knit's
// own credentials.
var DefaultHostEnv = []string{"PATH", "HOME", "USER", "TMPDIR", "LANG", "LC_ALL", "TZ", "SSL_CERT_FILE", "SSL_CERT_DIR"}

// Options configure the local runtime. knit dev sets StateDir and leaves
// the rest to Defaults; tests override the rest.
type Options struct {
	// Gateway, with NetworkIsolated, serves each replica at its gateway
	// (the host's end of its veth) what a pod finds in a cluster: a DNS
	// server for Routes' names and the ingress's internal listener
	// (package gateway). The replica's resolv.conf then names it as a
	// kubelet names the cluster's DNS. Nil: replicas get this machine's
	// resolv.conf and reach no other Service by name.
	Gateway Gateway
	// StateDir is knit dev's state directory. Builds are cached in
	// <StateDir>/builds, process output goes to <StateDir>/logs.
	StateDir string
	// ModuleDir is where ko:// images are built: `go build` runs here and
	// ko://./dir is relative to it. It is also the working directory of
	// containers that set none. Default: the current directory.
	ModuleDir string
	// Executable runs knit:// images: knit://queue is `<Executable> queue`,
	// or knit-queue when that lies beside it.
	// Default: the running binary (os.Executable).
	Executable string
	// Go is the go command that builds ko:// images. Default "go".
	Go string
	// Allocatable is what replicas may ask of this machine, as a node's
	// status.allocatable: cpu and memory requests beyond it leave a
	// replica Pending, Unschedulable. Nil: every CPU and all memory.
	Allocatable corev1.ResourceList
	// NodeLabels are this machine's labels as a node's, besides those a
	// kubelet registers (kubernetes.io/hostname, kubernetes.io/os,
	// kubernetes.io/arch and their beta. forms), which they may replace:
	// what a pod's nodeSelector and required node affinity are matched
	// against. NodeTaints are its taints: a NoSchedule or NoExecute one
	// leaves a replica whose tolerations do not tolerate it Pending,
	// Unschedulable. knit dev schedules through no Node object (it is the
	// node, see docs/design.md; the Node it registers for kubectl logs
	// copies these), so these are where the node's labels and taints
	// live; none by default but the kubelet's labels.
	NodeLabels map[string]string
	NodeTaints []corev1.Taint
	// ShutdownGracePeriod bounds knit dev's own shutdown (Ctrl-C): what
	// has not stopped by then is killed, so quitting never waits minutes.
	// A replica stopped while knit dev runs (scale down, a deleted Pod, a
	// rollout) gets its whole terminationGracePeriodSeconds, as on a
	// kubelet, so requests in flight are answered. Default 10s.
	ShutdownGracePeriod time.Duration
	// Backoff is the restart schedule of crashing containers.
	Backoff Backoff
	// SourceDir, when set, names the module dir a pod's ko:// images are
	// built in (and its containers run in) from the pod template's labels
	// and annotations; "" means ModuleDir. knit dev answers with the
	// checkout of the commit a Revision was deployed from, so
	// ko://./cmd/hello builds exactly what was pushed.
	SourceDir func(ctx context.Context, namespace string, labels, annotations map[string]string) (string, error)
	// HostEnv names the variables replicas inherit from knit dev's
	// environment. Default DefaultHostEnv; set an empty non-nil slice for none.
	HostEnv []string
	// Network is where replicas listen: NetworkShared (the default) or
	// NetworkIsolated, a network namespace per replica (root on Linux;
	// CheckIsolation says whether this machine can).
	Network Network
	// VolumeSyncPeriod is how often a running replica's configMap, secret,
	// projected and downwardAPI volumes are read again and updated when
	// they changed (the kubelet's sync, which takes up to a minute or
	// so). Default 10s.
	VolumeSyncPeriod time.Duration
	// OCI runs container images (OpenOCI: root on Linux, with runc);
	// nil: an image that is neither ko:// nor knit:// cannot run and its
	// Deployment says so (ImageNotRunnable).
	OCI *OCI
	// ExpectSlices, when set, hears of every Service's EndpointSlices just
	// before the runtime writes them (none once the Service is gone): the
	// activator in the same process probes a new replica as soon as it
	// has an address, rather than after the slice's write has come back
	// through its watch.
	ExpectSlices func(service types.NamespacedName, labels map[string]string, slices []discoveryv1.EndpointSlice)
}

// Defaults fills what was left empty.
func (o *Options) Defaults() error {
	if o.ModuleDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("module dir: %w", err)
		}
		o.ModuleDir = wd
	}
	if o.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("knit executable: %w", err)
		}
		o.Executable = exe
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if o.ShutdownGracePeriod <= 0 {
		o.ShutdownGracePeriod = 10 * time.Second
	}
	if o.VolumeSyncPeriod <= 0 {
		o.VolumeSyncPeriod = 10 * time.Second
	}
	if o.HostEnv == nil {
		o.HostEnv = DefaultHostEnv
	}
	if o.Network == "" {
		o.Network = NetworkShared
	}
	o.Backoff.defaults()
	return nil
}

// Validate reports options that cannot work, before anything runs.
func (o *Options) Validate() error {
	var errs []error
	if o.StateDir == "" {
		errs = append(errs, errors.New("local runtime: a state directory is required"))
	}
	if fi, err := os.Stat(o.ModuleDir); err != nil || !fi.IsDir() {
		errs = append(errs, fmt.Errorf("local runtime: module dir %q is not a directory", o.ModuleDir))
	}
	if o.Network != NetworkShared && o.Network != NetworkIsolated {
		errs = append(errs, fmt.Errorf("local runtime: network %q is neither %q nor %q", o.Network, NetworkShared, NetworkIsolated))
	}
	return errors.Join(errs...)
}

func (o *Options) buildsDir() string { return filepath.Join(o.StateDir, "builds") }
func (o *Options) logsDir() string   { return filepath.Join(o.StateDir, "logs") }

// allocatable is Allocatable as the node counts it.
func (o *Options) allocatable() nodefit.Requests {
	if o.Allocatable == nil {
		return nodefit.MachineAllocatable()
	}
	return nodefit.FromList(o.Allocatable)
}

// Gateway opens the gateway of the replica at podIP, at hostIP; the
// Closer stops it when the replica's network goes.
type Gateway interface {
	Open(hostIP, podIP string) (io.Closer, error)
}
