package runtime

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/claims"
	"github.com/knitops/knit/local/etcfiles"
	"github.com/knitops/knit/local/view"
	"github.com/knitops/knit/local/volumes"
)

// podVolumes are a replica's volumes on disk, under
// <state>/volumes/<namespace>/<pod>/<volume>: written when the first
// container that mounts one is set up (as the kubelet sets a pod's volumes
// up before its containers), kept current while the replica runs
// (syncVolumes), and removed with the replica. The zero value is ready to
// use.
type podVolumes struct {
	mu       sync.Mutex
	prepared bool
	// written is each API-data volume's payload as it is on disk.
	written map[string]volumes.Payload
	// failing is each volume's last refresh error, logged once.
	failing map[string]string
	tokens  volumes.TokenCache

	// resolving makes the replica's containers take turns resolving its
	// claims (resolveClaims), so they mount the same directories.
	resolving sync.Mutex
	// claimsMu guards using and claims apart from mu, which a container
	// holds while it writes volumes: the binder reads using (claimUses).
	claimsMu sync.Mutex
	// using is every claim the replica is resolving or mounts, which the
	// binder must neither let go nor reclaim.
	using []claims.Use
	// claims are the pod's claim volumes by name, once all are resolved.
	claims map[string]claimMount
}

// volumesDir holds every replica's volumes. Only root may look in: it
// holds Secrets and tokens.
func (o *Options) volumesDir() string { return filepath.Join(o.StateDir, "volumes") }

// volumesDir is the replica's own directory of volumes and mount points.
func (r *replica) volumesDir() string {
	return filepath.Join(r.rt.opts.volumesDir(), r.key.Namespace, r.pod.Name)
}

// mountsFor is container c's mount plan, with the replica's volumes
// written first if they are not yet; nil when c mounts nothing. env
// expands subPathExpr.
func (r *replica) mountsFor(ctx context.Context, c *corev1.Container, env *envList) (*view.Plan, *failure) {
	if len(c.VolumeMounts) == 0 {
		return nil, nil
	}
	if f := volumeSupport(c, r.spec.Volumes, view.Supported()); f != nil {
		return nil, f
	}
	claims, err := r.claimMounts(ctx)
	if err == nil {
		err = r.prepareVolumes(ctx, claims)
	}
	if err != nil {
		return nil, &failure{Reason: ReasonFailedMount, Message: fmt.Sprintf("container %s: %v", c.Name, err)}
	}
	plan := &view.Plan{Scratch: filepath.Join(r.volumesDir(), "..mounts", c.Name)}
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(r.spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.Name })
		sub := m.SubPath
		if m.SubPathExpr != "" {
			sub = expand(m.SubPathExpr, env.lookup)
		}
		dir, readOnly := r.volumeDir(&r.spec.Volumes[i], claims)
		source, err := volumes.SubPath(dir, sub)
		if err != nil {
			return nil, &failure{Reason: ReasonFailedMount, Message: fmt.Sprintf("container %s: volume %q at %s: %v", c.Name, m.Name, m.MountPath, err)}
		}
		plan.Mounts = append(plan.Mounts, view.Mount{
			Volume: m.Name, Source: source, Target: m.MountPath, ReadOnly: m.ReadOnly || readOnly,
		})
	}
	view.SortMounts(plan.Mounts)
	return plan, nil
}

// volumeDir is where volume v lies on this machine, and whether every
// mount of it is read-only: a claim's directory (claims, by volume name),
// read-only when the volume says so; API data, always read-only; any
// other, the replica's own directory.
func (r *replica) volumeDir(v *corev1.Volume, claims map[string]claimMount) (dir string, readOnly bool) {
	if m, ok := claims[v.Name]; ok && v.PersistentVolumeClaim != nil {
		return m.dir, m.readOnly
	}
	return filepath.Join(r.volumesDir(), v.Name), volumes.APIData(v)
}

// volumeSupport refuses, for good, a container whose mounts knit dev
// cannot give it: mounts is view.Supported's answer (nil: this machine can),
// and only volumes of the types Knative allows can be given. It names the
// first volume the container cannot have and what it would take.
func volumeSupport(c *corev1.Container, vols []corev1.Volume, mounts error) *failure {
	for _, m := range c.VolumeMounts {
		i := slices.IndexFunc(vols, func(v corev1.Volume) bool { return v.Name == m.Name })
		var why string
		switch {
		case i < 0:
			why = "the pod has no such volume"
		case mounts != nil:
			why = mounts.Error()
		case !volumes.APIData(&vols[i]) && vols[i].EmptyDir == nil && vols[i].PersistentVolumeClaim == nil:
			why = "knit dev supports configMap, secret, projected, downwardAPI, emptyDir and persistentVolumeClaim volumes only"
		default:
			continue
		}
		return &failure{Reason: ReasonVolumesUnsupported, Message: fmt.Sprintf("container %s cannot mount volume %q at %s: %s", c.Name, m.Name, m.MountPath, why)}
	}
	return nil
}

// prepareVolumes writes every volume of the pod, once, and gives its
// claims' directories (claims, resolved by claimMounts) to the pod's
// fsGroup; a failure (a missing ConfigMap) is retried by the container's
// set-up with backoff.
func (r *replica) prepareVolumes(ctx context.Context, claims map[string]claimMount) error {
	r.volumes.mu.Lock()
	defer r.volumes.mu.Unlock()
	if r.volumes.prepared {
		return nil
	}
	if err := os.MkdirAll(r.rt.opts.volumesDir(), 0o700); err != nil {
		return fmt.Errorf("volumes: %w", err)
	}
	written := map[string]volumes.Payload{}
	src := r.volumeSources()
	for i := range r.spec.Volumes {
		v := &r.spec.Volumes[i]
		if v.PersistentVolumeClaim != nil {
			// Not the replica's to write: it lies in the claim's directory.
			if err := r.ownClaim(claims[v.Name]); err != nil {
				return fmt.Errorf("volume %q: %w", v.Name, err)
			}
			continue
		}
		files, err := volumes.PayloadOf(ctx, src, downward(r.pod), r.spec, v)
		if err == nil {
			err = r.writeVolume(v, files)
		}
		if err != nil {
			return fmt.Errorf("volume %q: %w", v.Name, err)
		}
		written[v.Name] = files
	}
	r.volumes.written, r.volumes.prepared = written, true
	return nil
}

// volumeSources reads the replica's volumes from the API server, its
// tokens through its cache.
func (r *replica) volumeSources() volumes.Sources {
	api := apiVolumeSources{rt: r.rt, namespace: r.pod.Namespace, serviceAccount: r.pod.ServiceAccountName}
	return r.volumes.tokens.Through(api)
}

// downward is pod as the downward API of its volumes reads it: the same
// fields its environment's valueFrom reads (podField, resourceField).
func downward(pod podIdentity) volumes.Pod {
	return volumes.Pod{
		Labels: pod.Labels, Annotations: pod.Annotations,
		Field:    func(path string) (string, error) { return podField(pod, path) },
		Resource: resourceField,
	}
}

// writeVolume writes one volume into its directory, afresh: an emptyDir is
// an empty directory anyone may write (0777, as the kubelet makes it), any
// other a read-only tree of its payload files, in the kubelet's layout
// (volumes.WriteAtomic).
func (r *replica) writeVolume(v *corev1.Volume, files volumes.Payload) error {
	dir := filepath.Join(r.volumesDir(), v.Name)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	mode := os.FileMode(0o755)
	if v.EmptyDir != nil {
		mode = 0o777
	}
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	if err := os.Chmod(dir, mode); err != nil {
		return err
	}
	if volumes.APIData(v) {
		if err := volumes.WriteAtomic(dir, files); err != nil {
			return err
		}
	}
	return r.ownVolume(v, dir)
}

// ownVolume gives the volume in dir to the pod's fsGroup, if it has one
// and knit dev may (root).
func (r *replica) ownVolume(v *corev1.Volume, dir string) error {
	if sc := r.spec.SecurityContext; sc != nil && sc.FSGroup != nil && os.Geteuid() == 0 {
		return volumes.SetOwnership(dir, uint32(*sc.FSGroup), volumes.APIData(v))
	}
	return nil
}

// removeVolumes removes the replica's volumes and mount points once its
// processes are gone. A mount namespace still ending holds its mounts on
// its own side only: removing the directories here detaches them there.
// Its claims' directories are not its own and stay; it no longer uses
// them, which lets the binder reclaim those of deleted claims.
func (r *replica) removeVolumes() error {
	r.volumes.setUsing(nil)
	if len(r.spec.Volumes) == 0 && len(r.spec.HostAliases) == 0 && !etcfiles.OwnResolvConf(r.spec, r.clusterDNS()) {
		return nil // nothing written: no volume, nor /etc file (processEtcMounts)
	}
	err := os.RemoveAll(r.volumesDir())
	_ = os.Remove(filepath.Dir(r.volumesDir())) // the namespace's, once empty
	return err
}

// apiVolumeSources reads volumes' sources from the API server, uncached as
// the environment's are (a replica reads each once).
type apiVolumeSources struct {
	rt                        *Runtime
	namespace, serviceAccount string
}

func (s apiVolumeSources) ConfigMap(ctx context.Context, name string) (map[string][]byte, error) {
	var cm corev1.ConfigMap
	if err := s.rt.reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, &cm); err != nil {
		return nil, err
	}
	data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	maps.Copy(data, cm.BinaryData)
	return data, nil
}

func (s apiVolumeSources) Secret(ctx context.Context, name string) (map[string][]byte, error) {
	var sec corev1.Secret
	if err := s.rt.reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, &sec); err != nil {
		return nil, err
	}
	return sec.Data, nil
}

// Token asks the API server's TokenRequest for a token of the pod's
// service account. It is not bound to the pod, which exists in knit dev
// only as this replica: the API server would refuse a binding to a Pod
// it does not have.
func (s apiVolumeSources) Token(ctx context.Context, audience string, expirationSeconds int64) ([]byte, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace, Name: s.serviceAccount}}
	if err := s.ensureDefaultServiceAccount(ctx, sa); err != nil {
		return nil, err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expirationSeconds}}
	if audience != "" {
		req.Spec.Audiences = []string{audience}
	}
	if err := s.rt.client.SubResource("token").Create(ctx, sa, req); err != nil {
		return nil, fmt.Errorf("token of serviceaccount %q: %w", sa.Name, err)
	}
	return []byte(req.Status.Token), nil
}

// ensureDefaultServiceAccount creates a namespace's "default"
// ServiceAccount when it is missing, as kube-controller-manager's
// serviceaccounts controller would have, which knit dev does not run.
// Any other service account must exist, as on Kubernetes.
func (s apiVolumeSources) ensureDefaultServiceAccount(ctx context.Context, sa *corev1.ServiceAccount) error {
	err := s.rt.reader.Get(ctx, client.ObjectKeyFromObject(sa), &corev1.ServiceAccount{})
	if !apierrors.IsNotFound(err) || sa.Name != "default" {
		if err != nil {
			return fmt.Errorf("serviceaccount %q: %w", sa.Name, err)
		}
		return nil
	}
	if err := s.rt.client.Create(ctx, sa.DeepCopy(), fieldOwner); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create serviceaccount %q: %w", sa.Name, err)
	}
	return nil
}
