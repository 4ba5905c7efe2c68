package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	securejoin "github.com/cyphar/filepath-securejoin"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/gitsync/build/dockerfile"
	"github.com/knitops/knit/local/cgroups"
	"github.com/knitops/knit/local/engine"
	"github.com/knitops/knit/local/images"
	"github.com/knitops/knit/local/view"
)

// ociLaunch is what each run of a container of an image needs: the
// pulled image and the runtime spec's settings but for the user, which
// is read from the image's files at each start.
type ociLaunch struct {
	image  *images.Image
	config engine.Config

	mu      sync.Mutex
	current string // the running run's runc id: exec probes and hooks go there
}

// ociImage reports whether container c runs an image through the engine:
// anything but ko:// and knit://, which knit dev builds and runs itself.
// A command does not change that: it runs inside the image, never on
// this machine.
func ociImage(c *corev1.Container) bool {
	return !strings.HasPrefix(c.Image, koScheme) && !strings.HasPrefix(c.Image, knitScheme)
}

// resolveOCI fills l for a container of an image: pulled (attempt counts
// the tries, for the kubelet's back-off wording), argv, environment,
// working directory, volumes and securityContext as a runtime spec.
func (r *replica) resolveOCI(ctx context.Context, c *corev1.Container, env *envList, mounts *view.Plan, l *launch, attempt int) *failure {
	if r.rt.opts.OCI == nil {
		return &failure{Reason: ReasonImageNotRunnable, Message: fmt.Sprintf(
			"image %s: knit dev runs container images as root on Linux, with runc; run knit dev as root (with runc installed), or build the app from source with a ko:// image", c.Image)}
	}
	if dockerfile.IsRef(c.Image) {
		return &failure{Reason: ReasonImageNotRunnable, Message: fmt.Sprintf(
			"image %s: dockerfile:// images are built by knit's Git path from the commit that names them; push the repository to knit's Git server (or sync it with a GitRepository) rather than applying the Service directly", c.Image)}
	}
	img, f := r.pullImage(ctx, c, attempt)
	if f != nil {
		return f
	}
	argv := ociArgv(img.Config, c)
	if len(argv) == 0 {
		return &failure{Reason: ReasonRunContainerError, Message: fmt.Sprintf(
			"container %s: image %s has no entrypoint or cmd, and the container no command", c.Name, c.Image)}
	}
	for i := range argv {
		argv[i] = expand(argv[i], env.lookup)
	}
	podEnv := append(processEnv(nil, r.pod, r.net, env), ReplicaMarker+"="+r.rt.instance)
	cfg := engine.Config{
		Args: argv, Env: ociEnv(img.Config.Env, podEnv), Cwd: ociWorkingDir(img.Config, c),
		Hostname: view.Hostname(r.pod.Name), Mounts: ociMounts(mounts),
	}
	if f := ociSecurity(r.spec, c, &cfg); f != nil {
		return f
	}
	lim := cgroups.ContainerLimits(c.Resources)
	cfg.Memory, cfg.CPUShares = lim.Memory, uint64(lim.CPUShares)
	if lim.CPUQuota > 0 {
		cfg.CPUQuota, cfg.CPUPeriod = lim.CPUQuota, cgroups.CPUPeriodMicros
	}
	l.argv, l.env, l.dir = argv, cfg.Env, cfg.Cwd
	l.oci = &ociLaunch{image: img, config: cfg}
	return nil
}

// ociRun is one run of a container of an image.
type ociRun struct {
	id, bundle string
}

// startOCI starts one run: a snapshot of the image mounted as the
// bundle's root, the user looked up in it, the spec written, and runc
// run in the replica's network and the container's cgroup (runc's own
// cgroup for the container is a child of it, so the kubelet-style limits
// knit wrote bound it). teardown must follow the run's end.
func (r *replica) startOCI(ctx context.Context, c *corev1.Container, o *ociLaunch, out output, cg *cgroups.Container) (*process, *ociRun, error) {
	oci := r.rt.opts.OCI
	began := time.Now()
	id, spare, err := oci.spares.take(ctx, o.image)
	run := &ociRun{id: id, bundle: filepath.Join(oci.bundles, id)}
	var p *process
	if err == nil {
		// Where a cold start's time goes before runc's own share.
		r.log.V(1).Info("Container root filesystem ready", "container", c.Name, "run", run.id, "spare", spare, "took", time.Since(began))
		p, err = r.startOCIRun(c, o, run, out, cg)
	}
	if err != nil {
		if terr := oci.teardown(ctx, run.id, oci.Images); terr != nil {
			r.log.Error(terr, "Container run not cleaned up", "container", c.Name)
		}
		return nil, nil, err
	}
	o.mu.Lock()
	o.current = run.id
	o.mu.Unlock()
	return p, run, nil
}

// startOCIRun starts run over its mounted root filesystem: the user
// looked up in it, the working directory made, /etc files and the spec
// written, then runc.
func (r *replica) startOCIRun(c *corev1.Container, o *ociLaunch, run *ociRun, out output, cg *cgroups.Container) (*process, error) {
	oci := r.rt.opts.OCI
	rootfs := filepath.Join(run.bundle, "rootfs")
	u, f := resolveOCIUser(rootfs, o.image.Config.User, r.spec, c, r.pod)
	if f != nil {
		return nil, failureError{f}
	}
	cfg := o.config
	cfg.UID, cfg.GID, cfg.AdditionalGIDs = u.UID, u.GID, u.Groups
	if _, set := lookupEnv(cfg.Env, "HOME"); !set {
		cfg.Env = append(cfg.Env, "HOME="+u.Home)
	}
	cfg.CgroupsPath = run.id
	etc, err := r.writeEtcFiles(run.bundle)
	if err != nil {
		return nil, err
	}
	cfg.Mounts = append(etc, cfg.Mounts...)
	if err := makeWorkingDir(rootfs, cfg.Cwd, u); err != nil {
		return nil, err
	}
	spec, err := engine.Spec("rootfs", cfg)
	if err != nil {
		return nil, err
	}
	if err := r.joinPIDNamespace(spec); err != nil {
		return nil, err
	}
	if err := oci.Runc.WriteBundle(run.bundle, spec); err != nil {
		return nil, err
	}
	return startProcess(oci.Runc.RunArgv(run.id, run.bundle), []string{"PATH=" + defaultPath}, run.bundle, out, r.net, cg, nil, nil)
}

// joinPIDNamespace makes a run of a pod that shares its process namespace
// join the replica's (openSandbox), as containerd has each container of
// such a pod join its sandbox's, rather than get a PID namespace of its
// own.
func (r *replica) joinPIDNamespace(spec *specs.Spec) error {
	if r.pidNS == nil {
		return nil
	}
	if !r.pidNS.Alive() {
		return errors.New("the pod's shared PID namespace is gone: its holder was killed")
	}
	for i := range spec.Linux.Namespaces {
		if spec.Linux.Namespaces[i].Type == specs.PIDNamespace {
			spec.Linux.Namespaces[i].Path = r.pidNS.Path()
			return nil
		}
	}
	spec.Linux.Namespaces = append(spec.Linux.Namespaces, specs.LinuxNamespace{Type: specs.PIDNamespace, Path: r.pidNS.Path()})
	return nil
}

// teardown ends a run once its runc has exited.
func (r *replica) teardownOCI(run *ociRun) {
	if run == nil {
		return
	}
	oci := r.rt.opts.OCI
	if err := oci.teardown(context.Background(), run.id, oci.Images); err != nil {
		r.log.Error(err, "Container run not cleaned up", "run", run.id)
	}
}

// writeEtcFiles writes the /etc/hosts and /etc/resolv.conf the kubelet
// gives a pod's containers (etcFiles) into the bundle, and returns their
// mounts.
func (r *replica) writeEtcFiles(bundle string) ([]engine.Mount, error) {
	hosts, resolv := r.etcFiles(false)
	if err := os.WriteFile(filepath.Join(bundle, "hosts"), hosts, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(bundle, "resolv.conf"), resolv, 0o644); err != nil {
		return nil, err
	}
	return []engine.Mount{
		{Source: filepath.Join(bundle, "hosts"), Destination: "/etc/hosts"},
		{Source: filepath.Join(bundle, "resolv.conf"), Destination: "/etc/resolv.conf"},
	}, nil
}

// makeWorkingDir creates the working directory in the container's root
// when the image lacks it, owned by the container's user, as containerd
// does.
func makeWorkingDir(rootfs, dir string, u ociUser) error {
	path, err := securejoin.SecureJoin(rootfs, dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("working directory %s: %w", dir, err)
	}
	return os.Chown(path, int(u.UID), int(u.GID))
}

// ociExec is the argv that runs argv inside o's running container, as
// its user, with its environment and working directory: for exec probes
// and hooks.
func (r *replica) ociExec(o *ociLaunch) func([]string) []string {
	return func(argv []string) []string {
		o.mu.Lock()
		id := o.current
		o.mu.Unlock()
		return r.rt.opts.OCI.Runc.ExecArgv(id, argv)
	}
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// startRun starts one run of the container: through the engine for an
// image, else as a process of this machine.
func (r *replica) startRun(ctx context.Context, c *corev1.Container, l launch, out output, cg *cgroups.Container) (*process, *ociRun, error) {
	if l.oci != nil {
		return r.startOCI(ctx, c, l.oci, out, cg)
	}
	p, err := startProcess(l.argv, l.env, l.dir, out, r.net, cg, l.mounts, l.cred)
	return p, nil, err
}

func (run *ociRun) imageID(l launch) string {
	if run == nil {
		return ""
	}
	return l.oci.image.DigestReference()
}

func (run *ociRun) containerID() string {
	if run == nil {
		return ""
	}
	return "runc://" + run.id
}

// failureError carries a setup failure found only when a run starts
// (the image's user, say), so it is reported with its own reason.
type failureError struct{ f *failure }

func (e failureError) Error() string { return e.f.Message }

// startFailure is how a failed start is reported.
func startFailure(c *corev1.Container, err error) *failure {
	var fe failureError
	if errors.As(err, &fe) {
		return fe.f
	}
	return &failure{Reason: ReasonRunContainerError, Message: fmt.Sprintf("container %s: %v", c.Name, err)}
}
