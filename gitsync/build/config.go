package build

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Config is where builds run and where their images go: the chart's
// build.* values, passed to `knit controller` as --build-* flags.
type Config struct {
	// Namespace runs the build Jobs; the registry Secret lives there.
	// knit's own namespace, so users' namespaces never hold push
	// credentials.
	Namespace string
	// Toolchain is the builder image (knit-toolchain: a pinned Go and the
	// knit-builder program). Part of every Key: a new toolchain rebuilds.
	Toolchain string
	// PullPolicy of the toolchain image; IfNotPresent by default.
	PullPolicy string
	// Registry is where images are pushed: host[:port][/path].
	Registry string
	// Insecure allows plain HTTP (and unverified TLS) to Registry. Only
	// when the operator sets it.
	Insecure bool
	// RegistrySecret names a Secret of type kubernetes.io/dockerconfigjson
	// in Namespace with the push credentials; empty for none.
	RegistrySecret string
	// GoProxy is the builds' GOPROXY; empty keeps Go's default.
	GoProxy string
	// CacheClaim is a PersistentVolumeClaim in Namespace holding the
	// module and build caches, so a second build downloads nothing; empty
	// gives each build an empty cache. The Builder creates it (CacheSize,
	// CacheStorageClass) before the first build when it is missing, as a
	// StatefulSet creates its claims: a claim in the chart would hold
	// `helm install --wait` forever on a WaitForFirstConsumer class.
	CacheClaim, CacheSize, CacheStorageClass string
	// ServiceAccount runs the build pods; it needs no API rights.
	ServiceAccount string
	// Platform is os/arch of the images, the nodes' platform.
	Platform string
	// Deadline bounds a build; TTL is how long a finished Job and its
	// logs are kept.
	Deadline, TTL time.Duration
	// CPU and Memory are the build container's requests; MemoryLimit its
	// limit ("" for none).
	CPU, Memory, MemoryLimit string
	// BuildKitImage is the image a dockerfile:// build's BuildKit step
	// runs (knit-buildkit: rootless buildkitd, runc, knit-builder); empty
	// builds no dockerfile:// images. Part of their keys.
	BuildKitImage string
	// Mirrors are HOST=MIRROR pairs: registries dockerfile:// builds pull
	// HOST's images from first (docker.io=registry.example:5000), how
	// builds find their bases where Docker Hub is out of reach. Insecure
	// applies to them as to Registry.
	Mirrors []string
	// AllowHosts are the host[:port]s a dockerfile:// build's RUN steps
	// may reach, through the allow-list proxy the BuildKit step runs; none
	// leaves steps no network at all. cmd/knit checks their spelling.
	AllowHosts []string
	// GitServerURL is knit's Git server (http://<host>:<port>) and
	// GitServerSecret the Secret in Namespace holding its token (key
	// gitserver.TokenKey). A build of a repository on that server with no
	// credentials of its own reads the token from there: the Secret is
	// already in the build namespace, so nothing is copied. Empty: none.
	GitServerURL, GitServerSecret string
}

// Defaults a Config falls back to.
const (
	DefaultDeadline = 15 * time.Minute
	DefaultTTL      = time.Hour
	DefaultPlatform = "linux/amd64"
)

// Validate says what is missing for builds to run.
func (c *Config) Validate() error {
	var errs []error
	if c.Namespace == "" {
		errs = append(errs, errors.New("build namespace is required"))
	}
	if c.Toolchain == "" {
		errs = append(errs, errors.New("build toolchain image is required"))
	}
	if c.Registry == "" {
		errs = append(errs, errors.New("build registry is required"))
	}
	for _, m := range c.Mirrors {
		if host, mirror, ok := strings.Cut(m, "="); !ok || host == "" || mirror == "" || strings.ContainsAny(m, " \t\n\"") {
			errs = append(errs, fmt.Errorf("build mirror %q is not HOST=MIRROR", m))
		}
	}
	for name, v := range map[string]string{"cpu": c.CPU, "memory": c.Memory, "memory limit": c.MemoryLimit, "cache size": c.CacheSize} {
		if _, err := resource.ParseQuantity(v); v != "" && err != nil {
			errs = append(errs, fmt.Errorf("build %s %q: %w", name, v, err))
		}
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Deadline <= 0 {
		c.Deadline = DefaultDeadline
	}
	if c.TTL <= 0 {
		c.TTL = DefaultTTL
	}
	if c.Platform == "" {
		c.Platform = DefaultPlatform
	}
	if c.CacheSize == "" {
		c.CacheSize = "5Gi"
	}
	if c.PullPolicy == "" {
		c.PullPolicy = "IfNotPresent"
	}
	return c
}
