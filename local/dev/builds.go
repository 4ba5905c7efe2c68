package dev

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/gitsync/build/dockerfile"
	"github.com/knitops/knit/local/buildkit"
	"github.com/knitops/knit/local/buildproxy"
	"github.com/knitops/knit/local/podlogs"
)

// buildkitToolchain names BuildKit in build keys: the Dockerfile frontend
// built into buildkitd decides what a Dockerfile means.
const buildkitToolchain = "buildkitd dockerfile.v0"

// buildDeadline bounds one dockerfile:// build, as a build Job's deadline
// bounds one on a cluster.
const buildDeadline = build.DefaultDeadline

// dockerfileBuilds builds knit dev's dockerfile:// images with BuildKit,
// one goroutine per build key, and records what each key built in the
// build ledger (knit-system, where no tenant writes), which alone is
// believed afterwards. A finished build wakes its repository through the
// Git path's triggers. It outlives a restart of the controllers.
type dockerfileBuilds struct {
	daemon *buildkit.Daemon
	cache  interface {
		Export(key, sha, dir, dst string) error
	}
	client client.Client // direct: the ledger and the repositories
	ledger build.Ledger
	events events.EventRecorder // per-step Events on the GitRepository
	wake   func(types.NamespacedName)
	logDir string
	log    logr.Logger
	// pods mirrors each build as a Pod for kubectl logs; nil when knit dev
	// runs against another API server (its kubelet client is not knit dev's).
	pods *buildPods
	// stopEvents stops the Events broadcaster.
	stopEvents func()
	ctx        context.Context // knit dev's: a build stops with it
	now        func() time.Time

	mu      sync.Mutex
	running map[string]knitv1alpha1.BuildStatus
	// finished holds builds that ran: a failure for as long as knit dev
	// runs (its key fails again), a success until a pass records it (the
	// ledger has its image; this its times). errs are the builds that
	// could not run (a daemon that would not start), returned once as an
	// error so the pass retries with backoff.
	finished map[string]knitv1alpha1.BuildStatus
	errs     map[string]error
}

// Builds reports whether b builds image: the dockerfile:// images.
func (b *dockerfileBuilds) Builds(image string) bool { return dockerfile.IsRef(image) }

// Key is the build key of r: BuildKit, the platform, the namespace, the
// context directory's tree and the reference's canonical spelling.
func (b *dockerfileBuilds) Key(r build.Request) string {
	image := r.Image
	if ref, err := dockerfile.Parse(r.Image); err == nil {
		image = ref.String()
	}
	return build.Key(buildkitToolchain, build.DefaultPlatform, r.Namespace, r.Tree, image)
}

// Logs says how to read the build's log: kubectl logs of its mirror pod,
// else the log file.
func (b *dockerfileBuilds) Logs(st knitv1alpha1.BuildStatus) string {
	if b.pods != nil {
		return fmt.Sprintf("kubectl logs -n %s pod/%s", config.SystemNamespace, build.JobName(st.Key))
	}
	return "log in " + b.logFile(st.Key)
}

func (b *dockerfileBuilds) logFile(key string) string {
	return filepath.Join(b.logDir, key[:16]+".log")
}

// Resolve returns where the build of r stands, starting it when nothing
// is known of its key. Only the ledger says a key succeeded.
func (b *dockerfileBuilds) Resolve(ctx context.Context, builds []knitv1alpha1.BuildStatus, r build.Request, _ string) (knitv1alpha1.BuildStatus, error) {
	ref, err := dockerfile.Parse(r.Image)
	if err != nil {
		return knitv1alpha1.BuildStatus{}, fmt.Errorf("%w: %w", build.ErrFailed, err)
	}
	key := b.Key(r)
	prev := build.Find(builds, key)
	image, err := b.ledger.Recorded(ctx, r.Namespace, key)
	if err != nil {
		return knitv1alpha1.BuildStatus{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if image != "" {
		st := b.record(r, key, prev)
		if fin, ok := b.finished[key]; ok && fin.Phase == knitv1alpha1.BuildSucceeded {
			st.CompletionTime, st.Durations = fin.CompletionTime, fin.Durations
			delete(b.finished, key)
		}
		st.Phase, st.Image, st.Message = knitv1alpha1.BuildSucceeded, image, ""
		if st.CompletionTime == nil {
			st.CompletionTime = ptr.To(metav1.NewTime(b.now()))
		}
		return st, nil
	}
	if st, ok := b.finished[key]; ok && st.Phase == knitv1alpha1.BuildFailed {
		return st, nil
	}
	if err, ok := b.errs[key]; ok {
		delete(b.errs, key) // the next pass starts it again
		return b.record(r, key, prev), err
	}
	if st, ok := b.running[key]; ok {
		return st, nil
	}
	if prev != nil && prev.Phase == knitv1alpha1.BuildFailed {
		return *prev, nil
	}
	st := b.record(r, key, nil)
	b.running[key] = st
	go b.run(r, ref, st)
	return st, nil
}

// record is the status of a build of key: the earlier one, else new.
func (b *dockerfileBuilds) record(r build.Request, key string, prev *knitv1alpha1.BuildStatus) knitv1alpha1.BuildStatus {
	if prev != nil && prev.Phase != knitv1alpha1.BuildFailed {
		return *prev
	}
	return knitv1alpha1.BuildStatus{Key: key, Source: r.Image, Commit: r.Commit, Phase: knitv1alpha1.BuildRunning,
		StartTime: ptr.To(metav1.NewTime(b.now()))}
}

// run builds one key and wakes its repository.
func (b *dockerfileBuilds) run(r build.Request, ref dockerfile.Ref, st knitv1alpha1.BuildStatus) {
	repo := types.NamespacedName{Namespace: r.Namespace, Name: r.Repository}
	defer b.wake(repo)
	ctx, cancel := context.WithTimeout(b.ctx, buildDeadline)
	defer cancel()
	began := b.now()
	if b.pods != nil {
		b.pods.started(b.ctx, st.Key, r)
	}
	image, res, err := b.build(ctx, r, ref, st.Key)
	if b.pods != nil {
		b.pods.finished(b.ctx, st.Key, r, began, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.running, st.Key)
	st.CompletionTime = ptr.To(metav1.NewTime(b.now()))
	st.Durations = durations(b.now().Sub(began), res)
	switch {
	case err == nil:
		if err := b.ledger.Record(ctx, r.Namespace, st.Key, image); err != nil {
			b.errs[st.Key] = err
			break
		}
		st.Phase, st.Image = knitv1alpha1.BuildSucceeded, image
		b.finished[st.Key] = st
	case errors.Is(err, buildkit.ErrFailed):
		st.Phase, st.Message = knitv1alpha1.BuildFailed, strings.TrimPrefix(err.Error(), buildkit.ErrFailed.Error()+": ")
		b.finished[st.Key] = st
	default:
		b.errs[st.Key] = fmt.Errorf("build %s: %w", r.Image, err)
	}
	cached, all := res.Cached()
	b.log.Info("Build finished", "image", r.Image, "commit", r.Commit, "built", image, "cachedSteps", fmt.Sprintf("%d/%d", cached, all), "err", err)
}

// build exports the context of r's commit and builds it, writing the log
// file and an Event per Dockerfile step.
func (b *dockerfileBuilds) build(ctx context.Context, r build.Request, ref dockerfile.Ref, key string) (string, buildkit.Result, error) {
	if err := os.MkdirAll(b.logDir, 0o700); err != nil {
		return "", buildkit.Result{}, err
	}
	logf, err := os.Create(b.logFile(key))
	if err != nil {
		return "", buildkit.Result{}, err
	}
	defer logf.Close()
	stamped := podlogs.NewFile(logf).Stream() // kubectl logs --since and --timestamps read its stamps
	defer stamped.Close()
	tmp, err := os.MkdirTemp("", "knit-build-context-")
	if err != nil {
		return "", buildkit.Result{}, err
	}
	defer os.RemoveAll(tmp)
	if err := b.cache.Export(r.Namespace+"/"+r.Repository, r.Commit, ref.Dir, tmp); err != nil {
		return "", buildkit.Result{}, fmt.Errorf("%w: %w", buildkit.ErrFailed, err)
	}
	repo := b.repository(ctx, r)
	spec := buildkit.Spec{Context: tmp, File: ref.File, Target: ref.Target, Args: ref.Args,
		Repository: r.Namespace + "/" + r.Repository + "/" + ref.Name(r.Repository), Tag: key[:16]}
	res, err := b.daemon.Build(ctx, spec, stamped, func(s buildkit.Step) { b.stepEvent(repo, r, key, s) })
	return res.Image, res, err
}

// repository is the GitRepository Events are about; nil when it is gone.
func (b *dockerfileBuilds) repository(ctx context.Context, r build.Request) *knitv1alpha1.GitRepository {
	repo := &knitv1alpha1.GitRepository{}
	if err := b.client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.Repository}, repo); err != nil {
		return nil
	}
	return repo
}

// stepEvent tells `kubectl describe gitrepository` how a Dockerfile step
// ended: run (and how long it took), from the cache, or failed.
func (b *dockerfileBuilds) stepEvent(repo *knitv1alpha1.GitRepository, r build.Request, key string, s buildkit.Step) {
	if repo == nil || b.events == nil || !s.Instruction() {
		return
	}
	kind, outcome := corev1.EventTypeNormal, "done in "+s.Duration
	switch s.State {
	case buildkit.StepCached:
		outcome = "CACHED"
	case buildkit.StepError:
		kind, outcome = corev1.EventTypeWarning, "failed: "+s.Error
	}
	// Events alike but for their note fold into one series (the first
	// note kept), so each build's step names its own action.
	action := fmt.Sprintf("Build/%.16s/%d", key, s.ID)
	b.events.Eventf(repo, nil, kind, "BuildStep", action, "%s of %.7s: %s: %s", r.Image, r.Commit, truncate(s.Name, 200), outcome)
}

// durations is status.builds' account of a build: its whole time and
// BuildKit's export and push of the image.
func durations(took time.Duration, res buildkit.Result) string {
	out := "build=" + took.Round(100*time.Millisecond).String()
	for _, s := range res.Steps {
		if strings.HasPrefix(s.Name, "exporting to image") && s.Duration != "" {
			out += " push=" + s.Duration
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// newDockerfileBuilds is knit dev's dockerfile:// builder over the Git
// path's cache, with its state under the state dir.
func newDockerfileBuilds(ctx context.Context, opts Options, c client.Client, rec events.EventRecorder, git *gitPlane, log logr.Logger) (*dockerfileBuilds, error) {
	mirrors, err := parseMirrors(opts.BuildMirrors)
	if err != nil {
		return nil, err
	}
	allow, err := buildproxy.ParseAllowList(opts.BuildAllowHosts...)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(opts.StateDir, "buildkit")
	return &dockerfileBuilds{
		daemon: buildkit.New(buildkit.Options{Dir: dir, BinDir: opts.BinDir, Mirrors: mirrors, AllowHosts: allow, Log: log.WithName("buildkit")}),
		cache:  git.cache, client: c, events: rec, ctx: ctx, now: time.Now, log: log.WithName("build"),
		ledger: build.Ledger{Client: c, Reader: c, Namespace: config.SystemNamespace},
		wake: func(key types.NamespacedName) {
			_ = git.trigger(ctx, nil, key)
		},
		logDir:  filepath.Join(dir, "logs"),
		running: map[string]knitv1alpha1.BuildStatus{}, finished: map[string]knitv1alpha1.BuildStatus{}, errs: map[string]error{},
	}, nil
}

// parseMirrors reads --build-mirror values: HOST=MIRROR[,MIRROR…].
func parseMirrors(values []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, v := range values {
		host, mirrors, ok := strings.Cut(v, "=")
		if !ok || host == "" || mirrors == "" || strings.ContainsAny(v, " \"\n\\") {
			return nil, fmt.Errorf("--build-mirror %q: want REGISTRY=MIRROR[,MIRROR…], e.g. docker.io=127.0.0.1:5000", v)
		}
		out[host] = append(out[host], strings.Split(mirrors, ",")...)
	}
	return out, nil
}

// startBuilds is knit dev's dockerfile:// builder, its Events recorded
// through a broadcaster of its own (it outlives the controllers' manager).
func startBuilds(ctx context.Context, opts Options, cfg *rest.Config, c client.Client, scheme *k8sruntime.Scheme, git *gitPlane) (*dockerfileBuilds, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("events client: %w", err)
	}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	if err := broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, fmt.Errorf("build events: %w", err)
	}
	b, err := newDockerfileBuilds(ctx, opts, c, broadcaster.NewRecorder(scheme, "knit-build"), git, ctrl.Log)
	if err != nil {
		broadcaster.Shutdown()
		return nil, err
	}
	b.stopEvents = broadcaster.Shutdown
	return b, nil
}

// close stops the daemons (a build under way fails with them) and the
// Events broadcaster.
func (b *dockerfileBuilds) close() {
	if err := b.daemon.Close(); err != nil {
		b.log.Error(err, "Stopping BuildKit")
	}
	if b.stopEvents != nil {
		b.stopEvents()
	}
}
