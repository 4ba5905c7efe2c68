package build

import (
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/gitsync/gitserver"
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
	workspaceDir = "/workspace"
	registryDir  = "/var/run/knit/registry"
	nonRootUID   = 65532
	containerLog = "build"
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
	// repository's username, password or bearerToken; "" for none.
	Credentials string
}

// Job is the build Job for r under c, named by key. Pure: the caller
// creates it.
func Job(c Config, r Request, key string) *batchv1.Job {
	c = c.withDefaults()
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
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{BuildLabel: key[:16]}},
				Spec:       podSpec(c, r, key),
			},
		},
	}
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
		Containers: []corev1.Container{container(c, r, key)},
		Volumes: []corev1.Volume{
			{Name: "workspace", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			cacheVolume(c),
		},
	}
	if c.RegistrySecret != "" {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "registry", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: c.RegistrySecret,
			Items:      []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
		}}})
	}
	return spec
}

func cacheVolume(c Config) corev1.Volume {
	if c.CacheClaim == "" {
		return corev1.Volume{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	return corev1.Volume{Name: "cache", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.CacheClaim}}}
}

func container(c Config, r Request, key string) corev1.Container {
	args := []string{
		"--source=" + r.URL, "--commit=" + r.Commit, "--package=" + Package(r.Image),
		"--image=" + Repository(c.Registry, r.Namespace, r.Repository, r.Image), "--tag=" + key[:32],
		"--platform=" + c.Platform, "--insecure=" + strconv.FormatBool(c.Insecure),
	}
	env := []corev1.EnvVar{
		{Name: "HOME", Value: "/tmp"},
		{Name: "GOCACHE", Value: cacheDir + "/go-build"},
		{Name: "GOMODCACHE", Value: cacheDir + "/mod"},
		{Name: "CGO_ENABLED", Value: "0"},
	}
	if c.GoProxy != "" {
		env = append(env, corev1.EnvVar{Name: "GOPROXY", Value: c.GoProxy})
	}
	mounts := []corev1.VolumeMount{
		{Name: "workspace", MountPath: workspaceDir},
		{Name: "tmp", MountPath: "/tmp"},
		{Name: "cache", MountPath: cacheDir},
	}
	if c.RegistrySecret != "" {
		env = append(env, corev1.EnvVar{Name: "DOCKER_CONFIG", Value: registryDir})
		mounts = append(mounts, corev1.VolumeMount{Name: "registry", MountPath: registryDir, ReadOnly: true})
	}
	if r.Credentials != "" {
		for _, k := range []string{"username", "password", "bearerToken"} {
			env = append(env, corev1.EnvVar{Name: "GIT_" + strings.ToUpper(k), ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Credentials}, Key: k, Optional: ptr.To(true)},
			}})
		}
	} else if c.GitServerSecret != "" && gitserver.OnServer(c.GitServerURL, r.URL) {
		env = append(env, corev1.EnvVar{Name: "GIT_USERNAME", Value: "knit"}, corev1.EnvVar{Name: "GIT_PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: c.GitServerSecret}, Key: gitserver.TokenKey},
		}})
	}
	return corev1.Container{
		Name: containerLog, Image: c.Toolchain, ImagePullPolicy: corev1.PullPolicy(c.PullPolicy),
		Args: args, Env: env, VolumeMounts: mounts, WorkingDir: workspaceDir,
		Resources:                resources(c),
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

// CacheClaim is the claim holding Go's module and build caches.
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
