package build

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/gitsync/build/dockerfile"
)

// Labels of build Jobs and of the Secrets they read.
const (
	// BuildLabel marks what belongs to a build; its value is the key's
	// first 16 digits.
	BuildLabel = "knit.dev/build"
	// RepositoryLabel and RepositoryNamespaceLabel name the GitRepository
	// a build is for: the Job lives in knit's namespace, not the
	// repository's, so an owner reference cannot.
	RepositoryLabel          = "knit.dev/repository"
	RepositoryNamespaceLabel = "knit.dev/repository-namespace"
	// KeyAnnotation holds the whole key.
	KeyAnnotation = "knit.dev/build-key"
)

// Paths in the build pod.
const (
	cacheDir     = "/cache"
	cacheRootDir = "/cache-root"
	workspaceDir = "/workspace"
	registryDir  = "/var/run/knit/registry"
	nonRootUID   = 65532
)

// The build pod's steps, one container each, in the order they run. Only
// compileStep runs what the user wrote (go build of their tree), so it
// holds nothing worth stealing; fetchStep holds the Git credentials and
// containerLog (the push) the registry's, and neither runs the user's
// code nor shares a scratch directory with the compile.
const (
	cacheStep    = "cache"   // creates the namespace's cache directory on the claim
	fetchStep    = "fetch"   // checks out the commit into the workspace
	compileStep  = "compile" // go build, into the workspace
	containerLog = "build"   // packs and pushes the binary; its result is the build's
)

// Request is one build: a ko:// image of one commit of one repository.
type Request struct {
	// Namespace and Repository name the GitRepository.
	Namespace, Repository string
	// URL is where the builder fetches the commit from.
	URL string
	// Commit is the SHA to build; Tree its root tree (part of the key).
	Commit, Tree string
	// Image is the ko:// reference.
	Image string
	// Credentials names the Secret in the build namespace holding the
	// repository's username, password or bearerToken (an SSH
	// repository's identity, known_hosts and password); "" for none.
	Credentials string
}

// Job is the build Job for r under c, named by key, or an error wrapping
// kopath.ErrInvalid or dockerfile.ErrInvalid when knit would not build
// r's image. Pure: the caller creates it.
func Job(c Config, r Request, key string) (*batchv1.Job, error) {
	if err := CheckSource(r.Image); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	spec, logs := podSpec(c, r, key), compileStep
	if dockerfile.IsRef(r.Image) {
		ref, _ := dockerfile.Parse(r.Image) // CheckSource parsed it
		spec, logs = dockerfilePodSpec(c, r, ref, key), dockerfileStep
	}
	name := JobName(key)
	labels := map[string]string{BuildLabel: key[:16], RepositoryLabel: r.Repository, RepositoryNamespaceLabel: r.Namespace}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: c.Namespace, Labels: labels,
			Annotations: map[string]string{KeyAnnotation: key, "knit.dev/commit": r.Commit, "knit.dev/image": r.Image},
		},
		Spec: batchv1.JobSpec{
			// A compile error fails the same way twice: no retries.
			BackoffLimit:            ptr.To[int32](0),
			ActiveDeadlineSeconds:   ptr.To(int64(c.Deadline.Seconds())),
			TTLSecondsAfterFinished: ptr.To(int32(c.TTL.Seconds())),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: map[string]string{BuildLabel: key[:16]},
					// `kubectl logs job/…` shows the compiler's or
					// BuildKit's output.
					Annotations: map[string]string{"kubectl.kubernetes.io/default-container": logs},
				},
				Spec: spec,
			},
		},
	}, nil
}

func podSpec(c Config, r Request, key string) corev1.PodSpec {
	spec := corev1.PodSpec{
		RestartPolicy:                corev1.RestartPolicyNever,
		ServiceAccountName:           c.ServiceAccount,
		AutomountServiceAccountToken: ptr.To(false),
		EnableServiceLinks:           ptr.To(false),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](nonRootUID), RunAsGroup: ptr.To[int64](nonRootUID),
			FSGroup: ptr.To[int64](nonRootUID), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		InitContainers: []corev1.Container{fetchContainer(c, r), compileContainer(c, r)},
		Containers:     []corev1.Container{pushContainer(c, r, key)},
		Volumes: []corev1.Volume{
			emptyDir("workspace"), emptyDir("tmp-" + fetchStep), emptyDir("tmp-" + compileStep), emptyDir("tmp-" + containerLog),
			cacheVolume(c),
		},
	}
	if c.CacheClaim != "" {
		spec.InitContainers = append([]corev1.Container{cacheContainer(c, r)}, spec.InitContainers...)
		spec.Volumes = append(spec.Volumes, emptyDir("tmp-"+cacheStep))
	}
	if c.RegistrySecret != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "registry", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: c.RegistrySecret,
			Items:      []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
		}}})
	}
	return spec
}

func emptyDir(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func cacheVolume(c Config) corev1.Volume {
	if c.CacheClaim == "" {
		return emptyDir("cache")
	}
	return corev1.Volume{Name: "cache", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.CacheClaim}}}
}

// cacheSubPath is the claim's directory for the namespace's builds: a
// namespace name is a DNS label, so it is one plain path element.
func cacheSubPath(r Request) string { return "ns/" + r.Namespace }

// cacheContainer creates the namespace's cache directory as the build
// user before the compile step mounts it by subPath (a subPath the
// kubelet creates may not be writable by that user). It mounts the whole
// claim, so it runs only knit-builder.
func cacheContainer(c Config, r Request) corev1.Container {
	ct := step(c, cacheStep, []string{"--step=" + cacheStep, "--cache-dir=" + cacheRootDir + "/" + cacheSubPath(r)})
	ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: "cache", MountPath: cacheRootDir})
	return ct
}

func fetchContainer(c Config, r Request) corev1.Container {
	ct := step(c, fetchStep, []string{"--step=" + fetchStep, "--source=" + r.URL, "--commit=" + r.Commit, "--workspace=" + workspaceDir})
	ct.Env = append(ct.Env, gitCredentials(c, r)...)
	ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: "workspace", MountPath: workspaceDir})
	return ct
}

// compileContainer runs go build of the user's tree: no credentials, the
// namespace's own caches.
func compileContainer(c Config, r Request) corev1.Container {
	ct := step(c, compileStep, []string{"--step=" + compileStep, "--package=" + Package(r.Image),
		"--platform=" + c.Platform, "--workspace=" + workspaceDir})
	ct.Env = append(ct.Env,
		corev1.EnvVar{Name: "GOCACHE", Value: cacheDir + "/go-build"},
		corev1.EnvVar{Name: "GOMODCACHE", Value: cacheDir + "/mod"},
		corev1.EnvVar{Name: "CGO_ENABLED", Value: "0"})
	if c.GoProxy != "" {
		ct.Env = append(ct.Env, corev1.EnvVar{Name: "GOPROXY", Value: c.GoProxy})
	}
	cache := corev1.VolumeMount{Name: "cache", MountPath: cacheDir}
	if c.CacheClaim != "" {
		cache.SubPath = cacheSubPath(r)
	}
	ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: "workspace", MountPath: workspaceDir}, cache)
	ct.Resources = resources(c)
	return ct
}

// pushContainer packs the compiled binary and pushes it: it reads the
// workspace, never writes it, and runs nothing from it.
func pushContainer(c Config, r Request, key string) corev1.Container {
	ct := step(c, containerLog, []string{"--step=push",
		"--image=" + Repository(c.Registry, r.Namespace, r.Repository, r.Image), "--tag=" + key[:32],
		"--platform=" + c.Platform, "--insecure=" + strconv.FormatBool(c.Insecure), "--workspace=" + workspaceDir})
	ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: "workspace", MountPath: workspaceDir, ReadOnly: true})
	if c.RegistrySecret != "" {
		ct.Env = append(ct.Env, corev1.EnvVar{Name: "DOCKER_CONFIG", Value: registryDir})
		ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: "registry", MountPath: registryDir, ReadOnly: true})
	}
	return ct
}

// step is a container of the toolchain image running one knit-builder
// step, with a scratch /tmp of its own as HOME.
func step(c Config, name string, args []string) corev1.Container {
	return corev1.Container{
		Name: name, Image: c.Toolchain, ImagePullPolicy: corev1.PullPolicy(c.PullPolicy),
		Args: args, WorkingDir: "/tmp",
		Env:                      []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}},
		VolumeMounts:             []corev1.VolumeMount{{Name: "tmp-" + name, MountPath: "/tmp"}},
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
}

func resources(c Config) corev1.ResourceRequirements {
	var rr corev1.ResourceRequirements
	set := func(list *corev1.ResourceList, name corev1.ResourceName, v string) {
		if q, err := resource.ParseQuantity(v); err == nil && v != "" {
			if *list == nil {
				*list = corev1.ResourceList{}
			}
			(*list)[name] = q
		}
	}
	set(&rr.Requests, corev1.ResourceCPU, c.CPU)
	set(&rr.Requests, corev1.ResourceMemory, c.Memory)
	set(&rr.Limits, corev1.ResourceMemory, c.MemoryLimit)
	return rr
}

// CacheClaim is the claim holding Go's module and build caches, one
// directory per namespace (cacheSubPath).
func CacheClaim(c Config) *corev1.PersistentVolumeClaim {
	c = c.withDefaults()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: c.CacheClaim, Namespace: c.Namespace, Labels: map[string]string{BuildLabel: "cache"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse(c.CacheSize), // Validate parsed it
			}},
		},
	}
	if c.CacheStorageClass != "" {
		pvc.Spec.StorageClassName = ptr.To(c.CacheStorageClass)
	}
	return pvc
}
