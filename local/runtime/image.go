package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/kobuild"
	"github.com/knitops/knit/local/view"
)

// The image schemes knit dev runs itself.
const (
	// koScheme images are Go programs built from source, as ko builds them
	// (package kobuild).
	koScheme = kobuild.Scheme
	// knitScheme images are knit's own subcommands: knit://queue is
	// knit-queue beside the knit binary, else `knit queue`.
	knitScheme = "knit://"
)

// imagePins remembers the binary each ko:// image of one pod template
// resolved to, so every replica of a template runs the same build — the
// way a Revision pins an image tag to a digest once — and scaling up later
// (from zero, say) does not wait for go list. A new template, a new revision,
// resolves afresh.
type imagePins struct {
	mu   sync.Mutex
	bins map[string]string
	// digests are the container images' repository@digest the template's
	// first pulls resolved their references to: a tag pushed again later
	// reaches a new template (a new Revision), not this one's replicas.
	digests map[string]string
}

// digest is the reference image was pinned to, "" before its first pull.
func (p *imagePins) digest(image string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.digests[image]
}

// pinDigest pins image to ref, unless it is pinned already.
func (p *imagePins) pinDigest(image, ref string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.digests == nil {
		p.digests = map[string]string{}
	}
	if _, ok := p.digests[image]; !ok {
		p.digests[image] = ref
	}
}

func (p *imagePins) resolve(ctx context.Context, image string, build func(context.Context, string) (string, error)) (string, error) {
	p.mu.Lock()
	bin, ok := p.bins[image]
	p.mu.Unlock()
	if ok && fileExists(bin) {
		return bin, nil
	}
	bin, err := build(ctx, image)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bins == nil {
		p.bins = map[string]string{}
	}
	p.bins[image] = bin
	return bin, nil
}

// command is the argv a container of a ko:// or knit:// image runs,
// following Kubernetes' rules for an image's entrypoint and cmd: the
// container's command replaces the entrypoint (and drops the image's
// args); its args replace the image's args. $(VAR) references are
// expanded from the container's environment. Other images run through
// the engine (resolveOCI).
func (rt *Runtime) command(ctx context.Context, pins *imagePins, moduleDir string, c *corev1.Container, env *envList) ([]string, *failure) {
	var argv []string
	switch image := c.Image; {
	case len(c.Command) > 0:
		argv = append(argv, c.Command...)
		argv = append(argv, c.Args...)
	case strings.HasPrefix(image, koScheme):
		bin, err := pins.resolve(ctx, image, rt.builderFor(moduleDir).Build)
		if err != nil {
			return nil, buildFailure(image, err)
		}
		argv = append([]string{bin}, c.Args...)
	default:
		argv = knitCommand(rt.opts.Executable, strings.TrimPrefix(image, knitScheme), c.Args)
	}
	for i := range argv {
		argv[i] = expand(argv[i], env.lookup)
	}
	if len(c.Command) > 0 {
		// A command written for the image ko builds may run its binary
		// where ko puts it, /ko-app/<name>.
		bin, err := koAppArgv0(ctx, argv[0], c, func(ctx context.Context, image string) (string, error) {
			return pins.resolve(ctx, image, rt.builderFor(moduleDir).Build)
		})
		if err != nil {
			return nil, buildFailure(c.Image, err)
		}
		argv[0] = bin
	}
	return argv, nil
}

// moduleDir is where a pod's ko:// images build: Options.SourceDir's
// answer, else ModuleDir.
func (rt *Runtime) moduleDir(ctx context.Context, pod podIdentity) (string, *failure) {
	if rt.opts.SourceDir == nil {
		return rt.opts.ModuleDir, nil
	}
	dir, err := rt.opts.SourceDir(ctx, pod.Namespace, pod.Labels, pod.Annotations)
	if err != nil {
		return "", &failure{Reason: ReasonBuildFailed, Message: fmt.Sprintf("source of %s: %v", pod.Name, err)}
	}
	if dir == "" {
		return rt.opts.ModuleDir, nil
	}
	return dir, nil
}

// knitCommand is the argv of knit's subcommand sub (knit://queue), with
// the container's args as its flags: the lean knit-<sub> binary when it
// lies beside the knit executable — a sidecar on the cold-start path then
// starts in milliseconds instead of initialising all of knit — else
// `knit <sub>`.
func knitCommand(executable, sub string, args []string) []string {
	lean := filepath.Join(filepath.Dir(executable), "knit-"+sub)
	if info, err := os.Stat(lean); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
		return append([]string{lean}, args...)
	}
	return append([]string{executable, sub}, args...)
}

func buildFailure(image string, err error) *failure {
	var be *kobuild.Error
	if errors.As(err, &be) {
		return &failure{Reason: ReasonBuildFailed, Message: be.Error()}
	}
	return &failure{Reason: ReasonBuildFailed, Message: fmt.Sprintf("go build %s: %v", image, err)}
}

// workingDir is the container's workingDir, else / where containers get
// views of their own (root), as ko's image has it, and the module dir
// elsewhere (the process then shares this machine's files anyway).
func (rt *Runtime) workingDir(moduleDir string, c *corev1.Container) (string, *failure) {
	if c.WorkingDir == "" {
		if view.Supported() == nil {
			// A container with a view of its own runs where ko's image
			// would start it: its WORKDIR, /. The module dir may be a
			// checkout in the state dir, which the view hides.
			return "/", nil
		}
		return moduleDir, nil
	}
	if fi, err := os.Stat(c.WorkingDir); err != nil || !fi.IsDir() {
		return "", &failure{Reason: ReasonRunContainerError, Message: fmt.Sprintf(
			"container %s: workingDir %s is not a directory on this machine", c.Name, c.WorkingDir)}
	}
	return c.WorkingDir, nil
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
