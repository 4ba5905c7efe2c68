package runtime

import (
	"cmp"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/engine"
	"github.com/knitops/knit/local/view"
)

// defaultPath is the PATH of a container whose image and spec set none,
// as containerd gives it.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ociArgv is what a container of an image runs, by Kubernetes' rules: the
// container's command replaces the image's entrypoint and drops its cmd;
// its args replace the image's cmd.
func ociArgv(cfg v1.Config, c *corev1.Container) []string {
	switch {
	case len(c.Command) > 0:
		return append(append([]string{}, c.Command...), c.Args...)
	case len(c.Args) > 0:
		return append(append([]string{}, cfg.Entrypoint...), c.Args...)
	default:
		return append(append([]string{}, cfg.Entrypoint...), cfg.Cmd...)
	}
}

// ociEnv is a container's environment: the image's ENV, then what the
// pod gives (which wins), and PATH when neither set one.
func ociEnv(image []string, pod []string) []string {
	env := &envList{}
	for _, kv := range append(append([]string{}, image...), pod...) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env.set(k, v)
		}
	}
	if _, ok := env.lookup("PATH"); !ok {
		env.set("PATH", defaultPath)
	}
	return env.environ()
}

// ociWorkingDir is the container's workingDir, else the image's, else /.
func ociWorkingDir(cfg v1.Config, c *corev1.Container) string {
	return cmp.Or(c.WorkingDir, cfg.WorkingDir, "/")
}

// securityCaps is the capabilities part of sc in cfg: added, dropped,
// privileged.
func securityCaps(sc *corev1.SecurityContext, cfg *engine.Config) {
	if sc == nil {
		return
	}
	if sc.Capabilities != nil {
		for _, a := range sc.Capabilities.Add {
			cfg.CapAdd = append(cfg.CapAdd, string(a))
		}
		for _, d := range sc.Capabilities.Drop {
			cfg.CapDrop = append(cfg.CapDrop, string(d))
		}
	}
	cfg.Privileged = sc.Privileged != nil && *sc.Privileged
}

// processPrivileges bounds a ko:// or knit:// container's process as the
// engine bounds an image's: the capabilities its securityContext leaves
// of containerd's defaults (a process not running as root holds none of
// them, but may not gain them either), and no_new_privs unless it allows
// privilege escalation or is privileged. That no_new_privs is set by
// default, where the kubelet sets it only when asked, is on purpose: a
// Go binary of knit dev's own building has no setuid program to run.
func processPrivileges(c *corev1.Container) (*view.Privileges, *failure) {
	var cfg engine.Config
	securityCaps(c.SecurityContext, &cfg)
	names, err := engine.Capabilities(cfg)
	if err != nil {
		return nil, &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf("container %s: securityContext.%v", c.Name, err)}
	}
	sc := c.SecurityContext
	escalates := cfg.Privileged || sc != nil && sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation
	return &view.Privileges{Capabilities: engine.CapabilityNumbers(names), NoNewPrivs: !escalates}, nil
}

// ociSecurity is the part of the runtime spec a securityContext decides,
// as the kubelet and containerd apply it: capabilities added and dropped,
// privileged, no_new_privs when privilege escalation is disallowed, a
// read-only root, the seccomp profile (container over pod; Unconfined
// unless RuntimeDefault is asked, as the kubelet's default is), and the
// pod's sysctls.
func ociSecurity(spec *corev1.PodSpec, c *corev1.Container, cfg *engine.Config) *failure {
	sc := c.SecurityContext
	securityCaps(sc, cfg)
	if sc != nil {
		cfg.NoNewPrivileges = sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
		cfg.ReadOnlyRoot = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	}
	profile := (*corev1.SeccompProfile)(nil)
	if spec.SecurityContext != nil {
		profile = spec.SecurityContext.SeccompProfile
		for _, s := range spec.SecurityContext.Sysctls {
			if cfg.Sysctls == nil {
				cfg.Sysctls = map[string]string{}
			}
			cfg.Sysctls[s.Name] = s.Value
		}
	}
	if sc != nil && sc.SeccompProfile != nil {
		profile = sc.SeccompProfile
	}
	cfg.Seccomp = engine.SeccompUnconfined
	if profile != nil {
		switch profile.Type {
		case corev1.SeccompProfileTypeRuntimeDefault:
			cfg.Seccomp = engine.SeccompRuntimeDefault
		case corev1.SeccompProfileTypeUnconfined:
		default:
			return &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(
				"container %s: seccomp profile %s is not supported by knit dev: use RuntimeDefault or Unconfined", c.Name, profile.Type)}
		}
	}
	return nil
}

// ociMounts are a container's volumes as bind mounts of the runtime spec.
func ociMounts(plan *view.Plan) []engine.Mount {
	if plan == nil {
		return nil
	}
	ms := make([]engine.Mount, 0, len(plan.Mounts))
	for _, m := range plan.Mounts {
		ms = append(ms, engine.Mount{Source: m.Source, Destination: m.Target, ReadOnly: m.ReadOnly})
	}
	return ms
}

// defaultPullPolicy is the kubelet's default when the spec sets none:
// Always for :latest or no tag, else IfNotPresent.
func defaultPullPolicy(c *corev1.Container) corev1.PullPolicy {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy
	}
	ref := c.Image
	if strings.Contains(ref, "@") {
		return corev1.PullIfNotPresent
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if _, tag, ok := strings.Cut(last, ":"); !ok || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}
