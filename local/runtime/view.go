package runtime

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/cgroups"
	"github.com/knitops/knit/local/view"
)

// containerView is what container c's processes see, where this machine
// gives containers namespaces of their own (root on Linux): every
// container then gets one, volumes or not — its volumes (l.mounts), its
// cgroup read-only where the hierarchies are mounted (cg), the binary of
// its image where the image has it when its user cannot reach knit dev's
// copy (l.image), the pod's /etc/hosts and resolv.conf where it makes
// them its own (l.etc), a /dev and read-only kernel settings as a
// container runtime makes them, and the pod's hostname (package view
// makes it). It costs a container's start the namespaces and a few
// mounts (package view's BenchmarkContainerView); in exchange no
// container sees the host's /dev/console or terminals, can change the
// machine's sysctls through /proc, or has a hostname other than its pod's.
// Elsewhere it is l.mounts alone (a replica that mounts a volume was
// refused before it got here).
func (r *replica) containerView(c *corev1.Container, l launch, cg *cgroups.Container) *view.Plan {
	if view.Supported() != nil {
		return l.mounts
	}
	v := &view.Plan{Scratch: filepath.Join(r.volumesDir(), "..mounts", c.Name)}
	if l.mounts != nil {
		*v = *l.mounts
	}
	v.Mounts = append(slices.Clone(v.Mounts), cgroupView(cg)...)
	v.Mounts = append(v.Mounts, l.etc...)
	if l.image != nil {
		v.Mounts = append(v.Mounts, *l.image)
	}
	view.SortMounts(v.Mounts)
	v.System, v.Hostname = true, view.Hostname(r.pod.Name)
	// What only knit dev may read is out of sight, even of a container
	// running as root; the builds it runs stay, read-only.
	v.Hide, v.Show, v.Limits = r.rt.opts.StateDir, []string{r.rt.opts.buildsDir()}, l.limits
	return v
}

// runAs fills l's credential from the container's securityContext and
// makes what it runs reachable by that user: HOME (unless the container
// sets it) the user's, a binary of knit dev's own making bound where the
// image would have it (imagePath) when the user cannot reach it where it
// is (under a state dir in /root, say), and the working directory "/"
// when the default, the module dir, is out of reach, as an image without
// a WORKDIR has it. A command or workingDir the container names and its
// user cannot reach fails, saying which directory stops it.
func (r *replica) runAs(c *corev1.Container, env *envList, l *launch) *failure {
	passwd := passwdLookup("/etc/passwd")
	self := ownIdentity()
	cred, f := containerCredential(r.pod, r.spec, c, self, passwd)
	if f != nil || cred == nil {
		return f
	}
	l.cred = cred
	if _, set := env.lookup("HOME"); !set && cred.Uid != self.uid {
		l.env = setEnv(l.env, "HOME", homeOf(cred.Uid, passwd))
	}
	if cred.Uid == 0 {
		return nil
	}
	if path, err := lookPath(l.argv[0], l.env, l.dir); err == nil && l.image == nil {
		if why := unreachable(path, cred, 0o1, statOwner); why != "" {
			target := imagePath(c, l.argv[0])
			fo, statErr := statOwner(path)
			if target == "" || view.Supported() != nil || statErr != nil || fo.denies(cred, 0o1, path) != "" {
				return &failure{Reason: ReasonRunContainerError, Message: fmt.Sprintf(
					"container %s runs as %s, which cannot execute %s: %s", c.Name, describeCredential(cred), path, why)}
			}
			l.image = &view.Mount{Volume: "image binary", Source: path, Target: target, ReadOnly: true}
			l.argv[0] = target
		}
	}
	if why := unreachable(l.dir, cred, 0o1, statOwner); why != "" {
		if c.WorkingDir != "" {
			return &failure{Reason: ReasonRunContainerError, Message: fmt.Sprintf(
				"container %s runs as %s, which cannot enter its workingDir %s: %s", c.Name, describeCredential(cred), l.dir, why)}
		}
		l.dir = "/"
	}
	return nil
}

// bindKoApp keeps a command's /ko-app/<name>, where ko puts a ko://
// image's binary, as the process's argv[0] (an app may read os.Args[0]:
// Knative's TestCmdArgs does) by binding knit dev's build there, where
// the container has a view of its own; elsewhere argv[0] stays the
// build's path, which command resolved it to.
func bindKoApp(c *corev1.Container, l *launch) {
	if len(c.Command) == 0 || view.Supported() != nil {
		return
	}
	target := koAppPath(c.Image)
	if target == "" || c.Command[0] != target || l.argv[0] == target {
		return
	}
	l.image = &view.Mount{Volume: "image binary", Source: l.argv[0], Target: target, ReadOnly: true}
	l.argv[0] = target
}

// imagePath is where container c's image holds the binary argv0, when
// knit dev made argv0 stand for it: /ko-app/<name> for a ko:// image (or
// a command naming that path), /ko-app/<base of argv0> for a knit://
// image. "" for a command of the container's own.
func imagePath(c *corev1.Container, argv0 string) string {
	switch {
	case len(c.Command) > 0:
		if p := koAppPath(c.Image); p != "" && c.Command[0] == p {
			return p
		}
		return ""
	case strings.HasPrefix(c.Image, koScheme):
		return cmp.Or(koAppPath(c.Image), koAppDir+filepath.Base(argv0))
	case strings.HasPrefix(c.Image, knitScheme):
		return koAppDir + filepath.Base(argv0)
	}
	return ""
}

// setEnv sets name in an environment list, in place of an earlier value.
func setEnv(env []string, name, value string) []string {
	kv := name + "=" + value
	for i, e := range env {
		if strings.HasPrefix(e, name+"=") {
			env = slices.Clone(env)
			env[i] = kv
			return env
		}
	}
	return append(slices.Clone(env), kv)
}

// execFor is how exec commands (probes, hooks) run for container c, as
// the kubelet runs them in a container: as its user, and inside its view
// (view.Join) when it has one of its own — the process pid's. A command
// naming the image's binary finds it there when it was bound; otherwise
// /ko-app/<name> resolves to knit dev's build (koAppArgv0).
func (r *replica) execFor(c *corev1.Container, pid int, l launch) *containerExec {
	e := newContainerExec(r.net, l.env, l.dir)
	if l.oci != nil {
		e.wrapExec = r.ociExec(l.oci)
		return e
	}
	e.cred = l.cred
	if !l.mounts.Empty() {
		e.inside, e.limits = pid, l.mounts.Limits
	}
	if l.image == nil {
		e.argv0 = r.koAppArgv0For(c)
	}
	return e
}

// pidOf is the pid container c (or init container: names are unique
// across both) runs as, 0 when it does not run.
func (r *replica) pidOf(c *corev1.Container) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range append(slices.Clone(r.inits), r.containers...) {
		if s.name == c.Name {
			return s.pid
		}
	}
	return 0
}

// execAttr is the SysProcAttr of an exec command run as cred (nil: as
// knit dev).
func execAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	if cred == nil {
		return nil
	}
	return &syscall.SysProcAttr{Credential: cred}
}
