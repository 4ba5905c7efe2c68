package main

import (
	"flag"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/build"
	"github.com/knitops/knit/local/buildproxy"
)

// buildFlags are the controller's --build-* flags: the chart's build.*
// values. Builds are on when a registry is named.
type buildFlags struct {
	cfg build.Config
}

func (b *buildFlags) register(fs *flag.FlagSet) {
	c := &b.cfg
	fs.StringVar(&c.Registry, "build-registry", "", "registry `host[:port][/path]` ko:// images are built and pushed to; empty: ko:// images are not built on the cluster")
	fs.BoolVar(&c.Insecure, "build-insecure-registry", false, "allow plain HTTP and unverified TLS to --build-registry")
	fs.StringVar(&c.RegistrySecret, "build-registry-secret", "", "`name` of a kubernetes.io/dockerconfigjson Secret in "+config.SystemNamespace+" with the push credentials")
	fs.StringVar(&c.Toolchain, "build-toolchain-image", "", "the knit-toolchain `image` build Jobs run (Go and knit-builder)")
	fs.StringVar(&c.BuildKitImage, "build-buildkit-image", "", "the knit-buildkit `image` dockerfile:// builds run BuildKit in (rootless); empty: dockerfile:// images are not built on the cluster")
	fs.Func("build-mirror", "`HOST=MIRROR`: dockerfile:// builds pull HOST's images from MIRROR first (repeatable)", func(v string) error {
		c.Mirrors = append(c.Mirrors, v)
		return nil
	})
	fs.Func("build-allow-host", "a `host[:port]` dockerfile:// RUN steps may reach through the build's allow-list proxy (repeatable; *.example.org; no port: 80 and 443); none: steps reach no network", func(v string) error {
		if _, err := buildproxy.ParseAllowList(v); err != nil {
			return err
		}
		c.AllowHosts = append(c.AllowHosts, v)
		return nil
	})
	fs.StringVar(&c.PullPolicy, "build-toolchain-pull-policy", "IfNotPresent", "imagePullPolicy of the toolchain image")
	fs.StringVar(&c.GoProxy, "build-goproxy", "", "GOPROXY of the builds; empty keeps Go's default")
	fs.StringVar(&c.CacheClaim, "build-cache-claim", "", "PersistentVolumeClaim in "+config.SystemNamespace+" for the Go module and build caches, created when missing; empty: every build starts cold")
	fs.StringVar(&c.CacheSize, "build-cache-size", "5Gi", "size of the cache claim when knit creates it")
	fs.StringVar(&c.CacheStorageClass, "build-cache-storage-class", "", "storageClassName of the cache claim; empty: the cluster's default")
	fs.StringVar(&c.ServiceAccount, "build-service-account", "knit-builder", "ServiceAccount the build pods run as")
	fs.StringVar(&c.Platform, "build-platform", build.DefaultPlatform, "`os/arch` of the built images")
	fs.DurationVar(&c.Deadline, "build-deadline", build.DefaultDeadline, "longest a build may run")
	fs.DurationVar(&c.TTL, "build-ttl", build.DefaultTTL, "how long a finished build Job and its logs are kept")
	fs.StringVar(&c.CPU, "build-cpu", "", "CPU request of a build")
	fs.StringVar(&c.Memory, "build-memory", "", "memory request of a build")
	fs.StringVar(&c.MemoryLimit, "build-memory-limit", "", "memory limit of a build")
}

// config is the builds' Config, nil when builds are off.
func (b *buildFlags) config() (*build.Config, error) {
	if b.cfg.Registry == "" {
		return nil, nil
	}
	c := b.cfg
	c.Namespace = config.SystemNamespace
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// cacheJobs limits the manager's Job informer to the build Jobs.
func cacheJobs(o *cache.Options, namespace string) {
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	o.ByObject[&batchv1.Job{}] = cache.ByObject{Namespaces: map[string]cache.Config{namespace: {}}}
}
