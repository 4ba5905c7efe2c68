package build

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/gitsync/build/kopath"
)

const testKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func isolationConfig() Config {
	return Config{Namespace: "knit-system", Toolchain: "t", Registry: "r", RegistrySecret: "push-creds",
		CacheClaim: "knit-build-cache", GitServerURL: "http://knit-gitserver.knit-system.svc:8090", GitServerSecret: "knit-gitserver-token"}
}

func isolationRequest(ns string) Request {
	return Request{Namespace: ns, Repository: "hello", URL: "http://knit-gitserver.knit-system.svc:8090/git/hello.git",
		Commit: strings.Repeat("c", 40), Tree: "t", Image: "ko://./cmd/hello", Credentials: "job-source"}
}

func podContainer(t *testing.T, spec corev1.PodSpec, name string) corev1.Container {
	t.Helper()
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("the build pod has no container %q", name)
	return corev1.Container{}
}

// secretsOf lists what secret material a container can reach: env from
// Secrets and mounts of Secret volumes.
func secretsOf(spec corev1.PodSpec, c corev1.Container) []string {
	var out []string
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			out = append(out, "env "+e.Name)
		}
		if strings.HasPrefix(e.Name, "GIT_") || e.Name == "DOCKER_CONFIG" {
			out = append(out, "env "+e.Name)
		}
	}
	for _, m := range c.VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name == m.Name && (v.Secret != nil || v.Projected != nil) {
				out = append(out, "volume "+v.Name)
			}
		}
	}
	return out
}

// The step that compiles the user's code holds no credential: no Git
// token, no registry credentials, no ServiceAccount token; fetching and
// pushing happen in containers of their own, and the push container runs
// nothing the user wrote.
func TestJobCompilesWithoutCredentials(t *testing.T) {
	job, err := Job(isolationConfig(), isolationRequest("default"), testKey)
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Spec.Template.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the build pod mounts a ServiceAccount token")
	}
	compile := podContainer(t, spec, "compile")
	if got := secretsOf(spec, compile); len(got) != 0 {
		t.Errorf("the compile container reaches credentials: %v", got)
	}
	if !slices.Contains(compile.Args, "--step=compile") || !slices.Contains(compile.Args, "--package=./cmd/hello") {
		t.Errorf("compile args = %v", compile.Args)
	}
	fetch := podContainer(t, spec, "fetch")
	if got := secretsOf(spec, fetch); !slices.Contains(got, "env GIT_PASSWORD") || slices.Contains(got, "env DOCKER_CONFIG") {
		t.Errorf("the fetch container reaches %v, want the Git credentials only", got)
	}
	push := podContainer(t, spec, containerLog)
	if got := secretsOf(spec, push); !slices.Contains(got, "volume registry") || slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "env GIT_") }) {
		t.Errorf("the push container reaches %v, want the registry's credentials only", got)
	}
	if slices.ContainsFunc(push.Args, func(a string) bool { return strings.HasPrefix(a, "--package") || strings.HasPrefix(a, "--source") }) {
		t.Errorf("the push container is given what to build or fetch: %v", push.Args)
	}
	for _, m := range push.VolumeMounts {
		if m.Name == "workspace" && !m.ReadOnly {
			t.Error("the push container can write the workspace the compile step filled")
		}
		if m.Name == "cache" {
			t.Error("the push container mounts the build cache")
		}
	}
	// No scratch directory is shared between a step that runs the user's
	// compile and one that holds credentials.
	for _, holder := range []corev1.Container{fetch, push} {
		for _, m := range holder.VolumeMounts {
			if m.Name == "workspace" {
				continue
			}
			for _, cm := range compile.VolumeMounts {
				if cm.Name == m.Name {
					t.Errorf("the compile container shares volume %q with %s", m.Name, holder.Name)
				}
			}
		}
	}
}

// Each namespace's builds read and write their own caches: the compile
// container sees only its namespace's directory of the claim.
func TestJobCachePerNamespace(t *testing.T) {
	paths := map[string]string{}
	for _, ns := range []string{"team-a", "team-b"} {
		job, err := Job(isolationConfig(), isolationRequest(ns), testKey)
		if err != nil {
			t.Fatal(err)
		}
		compile := podContainer(t, job.Spec.Template.Spec, "compile")
		for _, m := range compile.VolumeMounts {
			if m.Name == "cache" {
				paths[ns] = m.SubPath
			}
		}
	}
	if paths["team-a"] == "" || paths["team-a"] == paths["team-b"] {
		t.Fatalf("compile containers' cache subPaths = %v, want one per namespace", paths)
	}
}

// A ko:// path that is not plainly a package never becomes a build Job.
func TestJobRefusesInvalidImages(t *testing.T) {
	for _, image := range []string{"ko://-toolexec=/bin/sh", "ko://./...", "ko://../x", "ko://./cmd/hello -o /x"} {
		r := isolationRequest("default")
		r.Image = image
		job, err := Job(isolationConfig(), r, testKey)
		if err == nil || !errors.Is(err, kopath.ErrInvalid) || job != nil {
			t.Errorf("Job(%q) = %v, %v; want no Job and kopath.ErrInvalid", image, job, err)
		}
	}
}

// Builds of the same tree in two namespaces are two builds: one tenant's
// result is never what another's Service runs.
func TestKeyPerNamespace(t *testing.T) {
	a := Key("t", "linux/amd64", "team-a", "tree", "ko://./cmd/hello")
	b := Key("t", "linux/amd64", "team-b", "tree", "ko://./cmd/hello")
	if a == b {
		t.Error("the same tree in two namespaces has one key")
	}
}
