package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/knitops/knit/local/engine"
)

// The image subject: the same helloworld, built statically and packed
// as ko would pack it, pushed to a loopback registry and deployed as a
// second Service with examples/helloworld's manifest but for its name
// and image, so knit dev pulls it and runs it with runc.
const (
	imageService = "hello-image"
	imageHost    = imageService + ".default.localhost"
	imagePA      = imageService + "-00001"
	imageRepoTag = "bench/helloworld:1"
)

// imageSubject is what the image side of the cold-start part needs.
type imageSubject struct {
	reg      *loopbackRegistry
	ref      string // where the image was pushed
	manifest string // the Service, a file for kubectl apply
	bin      string // the static binary, to start alone
	runc     *runcAlone
	size     int64 // the image's compressed layers
}

// imageSkipReason says why this machine cannot run the image side, as
// knit dev itself decides (local/dev openImages): "" when it can.
func imageSkipReason() string {
	if os.Geteuid() != 0 {
		return "knit dev runs container images only as root"
	}
	if _, err := engine.FindRunc(); err != nil {
		return err.Error()
	}
	return ""
}

// prepareImage builds helloworld statically (as ko does: CGO_ENABLED=0,
// -trimpath), packs and pushes it to a loopback registry, writes the
// Service and a root filesystem for runc alone under tmp. close stops
// the registry.
func prepareImage(ctx context.Context, root, tmp string) (*imageSubject, error) {
	s := &imageSubject{bin: filepath.Join(tmp, "image", helloBinary)}
	cmd := goCmd(ctx, root, "build", "-trimpath", "-o", s.bin, helloPkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s (static): %v\n%s", helloPkg, err, out)
	}
	files, err := appImageFiles(s.bin)
	if err != nil {
		return nil, err
	}
	layer, _, err := layerOf(files)
	if err != nil {
		return nil, err
	}
	if s.size, err = layer.Size(); err != nil {
		return nil, err
	}
	if s.reg, err = startRegistry(); err != nil {
		return nil, err
	}
	s.ref = s.reg.ref(imageRepoTag)
	if _, err := pushImage(s.ref, appImageConfig(), layer); err != nil {
		s.close()
		return nil, err
	}
	m, err := imageManifest(filepath.Join(root, helloManifest), s.ref)
	if err != nil {
		s.close()
		return nil, err
	}
	s.manifest = filepath.Join(tmp, "image", "service.yaml")
	if err := os.WriteFile(s.manifest, m, 0o644); err != nil {
		s.close()
		return nil, err
	}
	if s.runc, err = newRuncAlone(filepath.Join(tmp, "runc-alone"), files); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *imageSubject) close() {
	if s.reg != nil {
		s.reg.close()
	}
}

// imageManifest is the Service in the manifest at path renamed
// imageService, its container's image ref: its annotations (min-scale 0,
// the autoscaling bounds) and environment stay the ko:// Service's, so
// the two differ only in how the app is built and run.
func imageManifest(path, ref string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var u unstructured.Unstructured
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) != 1 {
		return nil, fmt.Errorf("%s: want one container (%v)", path, err)
	}
	c, ok := containers[0].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: container is not an object", path)
	}
	c["image"] = ref
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		return nil, err
	}
	u.SetName(imageService)
	return yaml.Marshal(u.Object)
}

// bundlesLeft counts the container runs whose bundle directory is still
// under <state>/containers. knit dev removes a run's bundle last, after
// runc exited (taking the container with it), the root filesystem was
// unmounted and its snapshot removed: a bundle left is a container not
// gone yet. Every Revision is at zero when a cold start is timed, so
// none may be left. A bundle without config.json is not a run: it is a
// spare root filesystem, made ahead for the image's next run.
func bundlesLeft(stateDir string) int {
	entries, _ := os.ReadDir(filepath.Join(stateDir, "containers"))
	n := 0
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(stateDir, "containers", e.Name(), "config.json")); e.IsDir() && err == nil {
			n++
		}
	}
	return n
}

// runcAlone starts the app image's files with runc alone: knit's own
// runtime spec (engine.Spec: the same user, namespaces, masked paths
// and capabilities), over a plain directory rather than an overlay
// snapshot, in this process's network namespace, with no cgroup limits
// and no /etc/hosts or resolv.conf binds. It is runc's share of an image
// cold start.
type runcAlone struct {
	runc   engine.Runc
	dir    string
	rootfs string
	runs   int
}

func newRuncAlone(dir string, files []imageFile) (*runcAlone, error) {
	path, err := engine.FindRunc()
	if err != nil {
		return nil, err
	}
	r := &runcAlone{runc: engine.Runc{Path: path, Root: filepath.Join(dir, "state")}, dir: dir, rootfs: filepath.Join(dir, "rootfs")}
	if err := writeFiles(r.rootfs, files); err != nil {
		return nil, err
	}
	return r, nil
}

// start times one run: exec of `runc run` to the first byte of the app's
// answer, polled as appStart polls; the container is deleted after.
func (r *runcAlone) start(ctx context.Context) (time.Duration, error) {
	addr, err := freeAddr()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	r.runs++
	id := fmt.Sprintf("knit-bench-runc-%d", r.runs)
	bundle := filepath.Join(r.dir, id)
	spec, err := engine.Spec(r.rootfs, engine.Config{
		Args: appImageConfig().Entrypoint, Env: []string{"PORT=" + port, "TARGET=World"},
		UID: 65532, GID: 65532, Hostname: "runc-alone", CgroupsPath: id, Seccomp: engine.SeccompUnconfined,
	})
	if err != nil {
		return 0, err
	}
	if err := r.runc.WriteBundle(bundle, spec); err != nil {
		return 0, err
	}
	defer os.RemoveAll(bundle)
	argv := r.runc.RunArgv(id, bundle)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = bundle
	cmd.SysProcAttr = devSysProcAttr() // if the bench dies, runc passes the SIGTERM on
	ttfb, err := timeFirstAnswer(ctx, cmd, addr)
	return ttfb, errors.Join(err, r.remove(cmd, id))
}

// remove stops the run and deletes container id: SIGTERM to runc run,
// which passes it to the app, then runc delete, which kills what is
// left; runc run is killed if it outlives that.
func (r *runcAlone) remove(cmd *exec.Cmd, id string) error {
	exited := make(chan struct{})
	if cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.runc.Delete(ctx, id)
	if cmd.Process != nil {
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	return err
}
