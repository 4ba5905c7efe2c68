package build

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/build/dockerfile"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// keptBuilds bounds status.builds. A record that falls off costs one Job
// that finds the image already in the registry, not a compile.
const keptBuilds = 20

// Builder runs builds as Jobs in the build namespace and reads their
// results; the GitRepository's status.builds is its memory.
type Builder struct {
	client client.Client // Jobs, through the manager's cache
	reader client.Reader // pods and Secrets, uncached
	cfg    Config
	now    func() time.Time
	// resolve turns a repository's Secret into what a fetch presents
	// (SetCredentialResolver); nil copies it as it is.
	resolve func(ctx context.Context, data map[string][]byte) (map[string][]byte, error)
}

// SetCredentialResolver makes the Builder copy for each Job what resolve
// makes of the repository's Secret rather than the Secret itself: for
// GitHub App credentials an installation token, so the app's private key
// never leaves the controller.
func (b *Builder) SetCredentialResolver(resolve func(ctx context.Context, data map[string][]byte) (map[string][]byte, error)) {
	b.resolve = resolve
}

// New returns a Builder for cfg; c must be able to read Jobs in
// cfg.Namespace (the manager's cache limited to it), reader pods there
// and the repositories' credentials Secrets.
func New(c client.Client, reader client.Reader, cfg Config) (*Builder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Builder{client: c, reader: reader, cfg: cfg.withDefaults(), now: time.Now}, nil
}

// Key is r's build key under this builder's toolchain and platform.
func (b *Builder) Key(r Request) string {
	if dockerfile.IsRef(r.Image) {
		// BuildKit's image decides what a Dockerfile means; the
		// reference's canonical spelling, what is built.
		image := r.Image
		if ref, err := dockerfile.Parse(r.Image); err == nil {
			image = ref.String()
		}
		return Key(b.cfg.BuildKitImage, b.cfg.Platform, r.Namespace, r.Tree, image)
	}
	return Key(b.cfg.Toolchain, b.cfg.Platform, r.Namespace, r.Tree, r.Image)
}

// Namespace is where the build Jobs run.
func (b *Builder) Namespace() string { return b.cfg.Namespace }

// Resolve returns where the build of r stands, starting it when nothing
// is known of its key: Succeeded with the image by digest, Failed with
// the compiler's message, or Running. builds is the repository's
// status.builds; record what Resolve returns with Record. credentials
// names the repository's credentials Secret in its namespace, "" for none.
//
// An image knit would not build (CheckSource) is refused with an error
// wrapping ErrFailed and the reason, and nothing is started.
// A success is what the ledger (knit's own record of key → digest) says,
// never what builds or a registry tag claims.
func (b *Builder) Resolve(ctx context.Context, builds []knitv1alpha1.BuildStatus, r Request, credentials string) (knitv1alpha1.BuildStatus, error) {
	if err := CheckSource(r.Image); err != nil {
		return knitv1alpha1.BuildStatus{}, fmt.Errorf("%w: %w", ErrFailed, err)
	}
	key := b.Key(r)
	prev := Find(builds, key)
	image, err := b.ledger().Recorded(ctx, r.Namespace, key)
	if err != nil {
		return knitv1alpha1.BuildStatus{}, err
	}
	if image != "" {
		return b.succeeded(r, key, prev, image), nil
	}
	if prev != nil && prev.Phase == knitv1alpha1.BuildFailed {
		return *prev, nil
	}
	if prev != nil && prev.Phase == knitv1alpha1.BuildSucceeded {
		prev = nil // a success the ledger does not know: build it again
	}
	job := &batchv1.Job{}
	err = b.client.Get(ctx, client.ObjectKey{Namespace: b.cfg.Namespace, Name: JobName(key)}, job)
	switch {
	case apierrors.IsNotFound(err):
		return b.start(ctx, r, key, credentials, prev)
	case err != nil:
		return knitv1alpha1.BuildStatus{}, fmt.Errorf("get build Job %s: %w", JobName(key), err)
	}
	st := b.running(r, key, prev)
	done, failed := Finished(job)
	if !done {
		return st, nil
	}
	res, err := b.result(ctx, job, failed)
	if err != nil {
		return knitv1alpha1.BuildStatus{}, err
	}
	if res.Image != "" && !strings.HasPrefix(res.Image, Repository(b.cfg.Registry, r.Namespace, r.Repository, r.Image)+"@sha256:") {
		res = Result{Error: fmt.Sprintf("the build pushed %s, not an image of %s", res.Image, Repository(b.cfg.Registry, r.Namespace, r.Repository, r.Image))}
	}
	if res.Image != "" {
		if err := b.ledger().Record(ctx, r.Namespace, key, res.Image); err != nil {
			return knitv1alpha1.BuildStatus{}, err
		}
	}
	st.CompletionTime = ptr.To(metav1.NewTime(b.now()))
	st.Durations = res.Durations()
	if res.Image != "" {
		st.Phase, st.Image = knitv1alpha1.BuildSucceeded, res.Image
	} else {
		st.Phase, st.Message = knitv1alpha1.BuildFailed, res.Error
	}
	b.dropCredentials(ctx, job)
	log.FromContext(ctx).Info("Build finished", "image", r.Image, "commit", r.Commit, "phase", st.Phase, "durations", st.Durations, "job", st.Job)
	return st, nil
}

// succeeded is the record of a key the ledger holds: the earlier record
// with the ledger's image (whatever it said), else a new one.
func (b *Builder) succeeded(r Request, key string, prev *knitv1alpha1.BuildStatus, image string) knitv1alpha1.BuildStatus {
	st := b.running(r, key, prev)
	st.Phase, st.Image, st.Message = knitv1alpha1.BuildSucceeded, image, ""
	if st.CompletionTime == nil {
		st.CompletionTime = ptr.To(metav1.NewTime(b.now()))
	}
	return st
}

// running is the record of a build under way: the earlier one, else new.
func (b *Builder) running(r Request, key string, prev *knitv1alpha1.BuildStatus) knitv1alpha1.BuildStatus {
	if prev != nil {
		return *prev
	}
	return knitv1alpha1.BuildStatus{
		Key: key, Source: r.Image, Commit: r.Commit, Phase: knitv1alpha1.BuildRunning,
		Job: b.cfg.Namespace + "/" + JobName(key), StartTime: ptr.To(metav1.NewTime(b.now())),
	}
}

// start creates the build Job, and beside it a copy of the repository's
// credentials that the Job owns (pods cannot read another namespace's
// Secrets): only the keys its fetch step reads.
func (b *Builder) start(ctx context.Context, r Request, key, credentials string, prev *knitv1alpha1.BuildStatus) (knitv1alpha1.BuildStatus, error) {
	if gitsource.IsSSH(r.URL) && credentials == "" {
		return knitv1alpha1.BuildStatus{}, fmt.Errorf("%w: %s is an ssh URL, and the GitRepository has no Secret with a deploy key (%s) and %s for its build Job",
			ErrFailed, gitsource.RedactURL(r.URL), gitsource.SecretIdentity, gitsource.SecretKnownHosts)
	}
	var data map[string][]byte
	if credentials != "" {
		secret := &corev1.Secret{}
		if err := b.reader.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: credentials}, secret); err != nil {
			return knitv1alpha1.BuildStatus{}, fmt.Errorf("credentials Secret %s/%s: %w", r.Namespace, credentials, err)
		}
		data = secret.Data
		if b.resolve != nil {
			var err error
			if data, err = b.resolve(ctx, data); err != nil {
				return knitv1alpha1.BuildStatus{}, fmt.Errorf("credentials Secret %s/%s: %w", r.Namespace, credentials, err)
			}
		}
		var err error
		if data, err = fetchCredentials(r.URL, data); err != nil {
			return knitv1alpha1.BuildStatus{}, fmt.Errorf("%w: credentials Secret %s/%s: %w", ErrFailed, r.Namespace, credentials, err)
		}
		if data != nil { // not just a webhook secret
			r.Credentials = JobName(key) + "-source"
		}
	}
	if err := b.ensureCache(ctx); err != nil {
		return knitv1alpha1.BuildStatus{}, err
	}
	job, err := Job(b.cfg, r, key)
	if err != nil {
		return knitv1alpha1.BuildStatus{}, fmt.Errorf("%w: %w", ErrFailed, err)
	}
	if err := b.client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return knitv1alpha1.BuildStatus{}, fmt.Errorf("create build Job %s: %w", job.Name, err)
	}
	if data != nil {
		if err := b.copyCredentials(ctx, job, r.Credentials, data); err != nil {
			return knitv1alpha1.BuildStatus{}, err
		}
	}
	log.FromContext(ctx).Info("Build started", "image", r.Image, "commit", r.Commit, "job", job.Namespace+"/"+job.Name)
	st := b.running(r, key, nil)
	if prev != nil { // the Job vanished (deleted, or its TTL ran out) while running: started again
		st.StartTime = prev.StartTime
	}
	return st, nil
}

// ensureCache creates the cache claim when it is missing. It has no owner:
// like a StatefulSet's claims it outlives knit, and deleting it by hand
// drops the caches.
func (b *Builder) ensureCache(ctx context.Context) error {
	if b.cfg.CacheClaim == "" {
		return nil
	}
	key := client.ObjectKey{Namespace: b.cfg.Namespace, Name: b.cfg.CacheClaim}
	pvc := &corev1.PersistentVolumeClaim{}
	err := b.reader.Get(ctx, key, pvc)
	switch {
	case err == nil && pvc.DeletionTimestamp != nil:
		// A pod created now would wait for a claim that is going, and
		// hold it from going: start builds once it is gone.
		return fmt.Errorf("the build cache claim %s is being deleted (to drop the caches); builds start again once it is gone", key)
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get the build cache claim %s: %w", key, err)
	}
	if err := b.client.Create(ctx, CacheClaim(b.cfg)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the build cache claim %s: %w", key, err)
	}
	log.FromContext(ctx).Info("Created the build cache claim", "claim", key.String(), "size", b.cfg.CacheSize)
	return nil
}

// fetchCredentials are the keys of a repository's Secret its build's
// fetch step reads, nil when it holds none (a webhook secret alone: then
// a repository on knit's Git server is fetched with the server's token,
// Config.GitServerSecret). An SSH repository's are its deploy key, its
// passphrase and known_hosts, which are required: the fetch accepts no
// host key that is not listed.
func fetchCredentials(url string, data map[string][]byte) (map[string][]byte, error) {
	if gitsource.IsSSH(url) && (len(data[gitsource.SecretIdentity]) == 0 || len(data[gitsource.SecretKnownHosts]) == 0) {
		return nil, fmt.Errorf("an ssh repository's build needs the Secret's %s and %s", gitsource.SecretIdentity, gitsource.SecretKnownHosts)
	}
	var out map[string][]byte
	for _, cr := range credentialsFor(url) {
		if len(data[cr.key]) > 0 {
			if out == nil {
				out = map[string][]byte{}
			}
			out[cr.key] = data[cr.key]
		}
	}
	return out, nil
}

func (b *Builder) copyCredentials(ctx context.Context, job *batchv1.Job, name string, data map[string][]byte) error {
	if job.UID == "" { // it already existed: Create did not fill it in
		if err := b.reader.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return fmt.Errorf("get build Job %s: %w", job.Name, err)
		}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: job.Namespace, Labels: map[string]string{BuildLabel: job.Labels[BuildLabel]},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}},
		},
		Data: data,
	}
	if err := b.client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("copy the repository's fetch credentials for build Job %s: %w", job.Name, err)
	}
	return nil
}

// dropCredentials deletes a finished build's copy of the credentials
// rather than waiting for the Job's TTL.
func (b *Builder) dropCredentials(ctx context.Context, job *batchv1.Job) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name + "-source"}}
	if err := b.client.Delete(ctx, secret); err != nil && !apierrors.IsNotFound(err) {
		log.FromContext(ctx).Error(err, "Could not delete a build's credentials; the Job's TTL will", "secret", secret.Name)
	}
}

// Finished reports whether a build Job is over, and whether it failed.
func Finished(job *batchv1.Job) (done, failed bool) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, false
		case batchv1.JobFailed:
			return true, true
		}
	}
	return false, false
}

// result reads the steps' termination messages from the Job's pod; a
// Job that failed without one (deadline, image not pullable) says why in
// its condition.
func (b *Builder) result(ctx context.Context, job *batchv1.Job, failed bool) (Result, error) {
	pods := &corev1.PodList{}
	if err := b.reader.List(ctx, pods, client.InNamespace(job.Namespace), client.MatchingLabels{batchv1.JobNameLabel: job.Name}); err != nil {
		return Result{}, fmt.Errorf("list pods of build Job %s: %w", job.Name, err)
	}
	for _, pod := range pods.Items {
		if res, ok := PodResult(&pod); ok {
			return res, nil
		}
	}
	if !failed {
		return Result{Error: fmt.Sprintf("build Job %s/%s completed but its pod left no result", job.Namespace, job.Name)}, nil
	}
	return Result{Error: jobFailure(job)}, nil
}

func jobFailure(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return strings.TrimSpace(fmt.Sprintf("build Job %s/%s failed: %s: %s", job.Namespace, job.Name, c.Reason, c.Message))
		}
	}
	return fmt.Sprintf("build Job %s/%s failed", job.Namespace, job.Name)
}

// Record stores st in builds: in place of its key's earlier record, else
// first, keeping the newest keptBuilds.
func Record(builds []knitv1alpha1.BuildStatus, st knitv1alpha1.BuildStatus) []knitv1alpha1.BuildStatus {
	if prev := Find(builds, st.Key); prev != nil {
		*prev = st
		return builds
	}
	return append([]knitv1alpha1.BuildStatus{st}, builds[:min(len(builds), keptBuilds-1)]...)
}

// Find is the record of key in builds, nil when there is none.
func Find(builds []knitv1alpha1.BuildStatus, key string) *knitv1alpha1.BuildStatus {
	for i := range builds {
		if builds[i].Key == key {
			return &builds[i]
		}
	}
	return nil
}

// ErrFailed marks a build that failed: the commit's problem, fixed by a
// push, never by a retry.
var ErrFailed = errors.New("build failed")

// Builds reports whether this builder builds image: the ko:// images,
// and the dockerfile:// ones when it has a BuildKit image.
func (b *Builder) Builds(image string) bool {
	return strings.HasPrefix(image, Scheme) || b.cfg.BuildKitImage != "" && dockerfile.IsRef(image)
}

// Logs says where a build's output is read while its Job is kept.
func (b *Builder) Logs(st knitv1alpha1.BuildStatus) string {
	return fmt.Sprintf("kubectl logs -n %s job/%s", b.cfg.Namespace, strings.TrimPrefix(st.Job, b.cfg.Namespace+"/"))
}
