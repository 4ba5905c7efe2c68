package build

import (
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/gitsync/build/dockerfile"
)

func dockerfileConfig() Config {
	c := isolationConfig()
	c.BuildKitImage, c.Mirrors, c.Insecure = "knit-buildkit", []string{"docker.io=registry.example:5000"}, true
	c.AllowHosts = []string{"pypi.org", "files.pythonhosted.org"}
	return c
}

// A dockerfile:// build runs BuildKit as the one step that runs what the
// user wrote, in the BuildKit image, holding no credential; its context,
// Dockerfile, stage and arguments reach knit-builder as flags of their
// own; fetch drops .git and push sends the layout.
func TestDockerfileJob(t *testing.T) {
	r := isolationRequest("team-a")
	r.Image = "dockerfile://./web?file=Dockerfile.prod&target=runtime&build-arg=B=2&build-arg=A=1"
	job, err := Job(dockerfileConfig(), r, testKey)
	if err != nil {
		t.Fatal(err)
	}
	spec := job.Spec.Template.Spec
	if got := job.Spec.Template.Annotations["kubectl.kubernetes.io/default-container"]; got != dockerfileStep {
		t.Errorf("kubectl logs job/… shows %q, want BuildKit's output", got)
	}
	var names []string
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		names = append(names, c.Name)
	}
	if want := []string{cacheStep, fetchStep, dockerfileStep, containerLog}; !slices.Equal(names, want) {
		t.Errorf("steps = %v, want %v", names, want)
	}
	bk := podContainer(t, spec, dockerfileStep)
	if bk.Image != "knit-buildkit" {
		t.Errorf("BuildKit runs from %q", bk.Image)
	}
	if got := secretsOf(spec, bk); len(got) != 0 {
		t.Errorf("the BuildKit step reaches credentials: %v", got)
	}
	for _, want := range []string{"--step=dockerfile", "--context=web", "--dockerfile=Dockerfile.prod", "--target=runtime",
		"--build-arg=A=1", "--build-arg=B=2", "--mirror=docker.io=registry.example:5000", "--insecure=true", "--cache-dir=/cache",
		"--allow-host=pypi.org", "--allow-host=files.pythonhosted.org"} {
		if !slices.Contains(bk.Args, want) {
			t.Errorf("BuildKit step args %v lack %s", bk.Args, want)
		}
	}
	if i, j := slices.Index(bk.Args, "--build-arg=A=1"), slices.Index(bk.Args, "--build-arg=B=2"); i > j {
		t.Errorf("build arguments are not in a stable order: %v", bk.Args)
	}
	sc := bk.SecurityContext
	if sc == nil || !*sc.RunAsNonRoot || *sc.RunAsUser == 0 || !*sc.ReadOnlyRootFilesystem ||
		!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
		!slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SETUID", "SETGID"}) || sc.Privileged != nil {
		t.Errorf("BuildKit step security context = %+v, want nonroot, read-only, only SETUID/SETGID to gain", sc)
	}
	var cache string
	for _, m := range bk.VolumeMounts {
		if m.Name == "cache" {
			cache = m.SubPath
		}
	}
	if cache != "ns/team-a" {
		t.Errorf("BuildKit's state is on the claim's %q, want the namespace's directory", cache)
	}
	for _, step := range []string{fetchStep, containerLog} {
		if c := podContainer(t, spec, step); !slices.Contains(c.Args, "--context=web") || c.Image != "t" {
			t.Errorf("%s runs %s with %v, want the toolchain image told of the context", step, c.Image, c.Args)
		}
	}
	push := podContainer(t, spec, containerLog)
	for _, m := range push.VolumeMounts {
		if m.Name == "workspace" && !m.ReadOnly {
			t.Error("the push container can write the workspace the BuildKit step filled")
		}
	}
	for _, holder := range []string{fetchStep, containerLog} {
		for _, m := range podContainer(t, spec, holder).VolumeMounts {
			if m.Name != "workspace" && slices.ContainsFunc(bk.VolumeMounts, func(b corev1.VolumeMount) bool { return b.Name == m.Name }) {
				t.Errorf("the BuildKit step shares volume %q with %s", m.Name, holder)
			}
		}
	}
	if slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "tmp-"+compileStep }) {
		t.Error("a dockerfile:// build pod keeps the compile step's scratch volume")
	}
}

// The builder takes dockerfile:// images only with a BuildKit image; the
// key depends on that image and on the reference's canonical spelling,
// not on how it is written.
func TestBuilderBuildsDockerfilesWithBuildKit(t *testing.T) {
	without := &Builder{cfg: isolationConfig().withDefaults()}
	with := &Builder{cfg: dockerfileConfig().withDefaults()}
	if without.Builds("dockerfile://./web") || !with.Builds("dockerfile://./web") || !with.Builds("ko://./cmd/hello") {
		t.Error("Builds: want dockerfile:// only with a BuildKit image, ko:// always")
	}
	r := isolationRequest("default")
	r.Image = "dockerfile://./web?build-arg=B=2&build-arg=A=1"
	same := r
	same.Image = "dockerfile://./web?build-arg=A%3D1&build-arg=B%3D2"
	if with.Key(r) != with.Key(same) {
		t.Error("two spellings of one build have two keys")
	}
	other := *with
	other.cfg.BuildKitImage = "knit-buildkit:v2"
	if other.Key(r) == with.Key(r) {
		t.Error("a new BuildKit image keeps the keys of the old one's builds")
	}
	if got := Repository("registry.example", "default", "shop", r.Image); got != "registry.example/default/shop/web" {
		t.Errorf("Repository = %s, want the context directory's name", got)
	}
}

// A dockerfile:// image that names a path outside the repository or an
// unknown setting never becomes a build Job.
func TestDockerfileJobRefusesInvalidImages(t *testing.T) {
	for _, image := range []string{"dockerfile://../x", "dockerfile://./web?network=host", "dockerfile://./web?target=-x"} {
		r := isolationRequest("default")
		r.Image = image
		job, err := Job(dockerfileConfig(), r, testKey)
		if err == nil || !errors.Is(err, dockerfile.ErrInvalid) || job != nil {
			t.Errorf("Job(%q) = %v, %v; want no Job and dockerfile.ErrInvalid", image, job, err)
		}
	}
}

func TestConfigRefusesBadMirrors(t *testing.T) {
	for _, m := range []string{"docker.io", "=x", "docker.io=", "docker.io=a b"} {
		c := dockerfileConfig()
		c.Mirrors = []string{m}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "mirror") {
			t.Errorf("Validate with mirror %q = %v, want it refused", m, err)
		}
	}
}
