package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/local/engine"
)

func TestOCIArgvFollowsKubernetesRules(t *testing.T) {
	img := v1.Config{Entrypoint: []string{"/app"}, Cmd: []string{"--serve"}}
	for _, tc := range []struct {
		name          string
		command, args []string
		want          []string
	}{
		{"image's entrypoint and cmd", nil, nil, []string{"/app", "--serve"}},
		{"args replace cmd", nil, []string{"--once"}, []string{"/app", "--once"}},
		{"command replaces entrypoint and drops cmd", []string{"/bin/sh"}, nil, []string{"/bin/sh"}},
		{"command and args", []string{"/bin/sh"}, []string{"-c", "true"}, []string{"/bin/sh", "-c", "true"}},
	} {
		got := ociArgv(img, &corev1.Container{Command: tc.command, Args: tc.args})
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestOCIEnvPodOverImage(t *testing.T) {
	got := ociEnv([]string{"A=image", "B=image", "PATH=/image/bin"}, []string{"B=pod", "C=pod"})
	want := []string{"A=image", "B=pod", "PATH=/image/bin", "C=pod"}
	if !slices.Equal(got, want) {
		t.Errorf("env = %q, want %q", got, want)
	}
	if got := ociEnv(nil, []string{"X=1"}); !slices.Contains(got, "PATH="+defaultPath) {
		t.Errorf("no PATH from image or pod: %q lacks the default", got)
	}
}

func TestDefaultPullPolicy(t *testing.T) {
	for image, want := range map[string]corev1.PullPolicy{
		"busybox":                               corev1.PullAlways,
		"busybox:latest":                        corev1.PullAlways,
		"registry:5000/team/app":                corev1.PullAlways,
		"registry:5000/team/app:1.2":            corev1.PullIfNotPresent,
		"app@sha256:" + strings.Repeat("a", 64): corev1.PullIfNotPresent,
	} {
		if got := defaultPullPolicy(&corev1.Container{Image: image}); got != want {
			t.Errorf("%s: %s, want %s", image, got, want)
		}
	}
	if got := defaultPullPolicy(&corev1.Container{Image: "busybox", ImagePullPolicy: corev1.PullNever}); got != corev1.PullNever {
		t.Errorf("an explicit policy is kept: %s", got)
	}
}

func TestOCISecurity(t *testing.T) {
	runtimeDefault := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	for _, tc := range []struct {
		name string
		pod  *corev1.PodSecurityContext
		sc   *corev1.SecurityContext
		want engine.Config
		fail string
	}{
		{name: "nothing asked: unconfined, as the kubelet's default", want: engine.Config{Seccomp: engine.SeccompUnconfined}},
		{name: "capabilities, read-only root, no escalation", sc: &corev1.SecurityContext{
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}},
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
		}, want: engine.Config{CapDrop: []string{"ALL"}, CapAdd: []string{"NET_BIND_SERVICE"}, ReadOnlyRoot: true, NoNewPrivileges: true, Seccomp: engine.SeccompUnconfined}},
		{name: "pod's RuntimeDefault seccomp and sysctls", pod: &corev1.PodSecurityContext{SeccompProfile: runtimeDefault, Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}}},
			want: engine.Config{Seccomp: engine.SeccompRuntimeDefault, Sysctls: map[string]string{"net.ipv4.ip_unprivileged_port_start": "0"}}},
		{name: "container's Unconfined over the pod's RuntimeDefault", pod: &corev1.PodSecurityContext{SeccompProfile: runtimeDefault},
			sc: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}, want: engine.Config{Seccomp: engine.SeccompUnconfined}},
		{name: "a Localhost profile is refused", sc: &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}, fail: "Localhost is not supported"},
	} {
		var got engine.Config
		f := ociSecurity(&corev1.PodSpec{SecurityContext: tc.pod}, &corev1.Container{Name: "app", SecurityContext: tc.sc}, &got)
		if tc.fail != "" {
			if f == nil || f.Reason != ReasonCreateContainerConfigError || !strings.Contains(f.Message, tc.fail) {
				t.Errorf("%s: %v, want CreateContainerConfigError saying %q", tc.name, f, tc.fail)
			}
			continue
		}
		if f != nil {
			t.Errorf("%s: %v", tc.name, f)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, d)
		}
	}
}

func TestResolveOCIUser(t *testing.T) {
	rootfs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rootfs, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(rootfs, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\nweb:x:1000:1000::/srv:/bin/sh\n")
	write("etc/group", "root:x:0:\nweb:x:1000:\nstaff:x:50:web\n")
	pod := podIdentity{Name: "p", Namespace: "n", UID: "u"}
	for _, tc := range []struct {
		name      string
		imageUser string
		pod       *corev1.PodSecurityContext
		sc        *corev1.SecurityContext
		want      ociUser
		fail      string
	}{
		{name: "no USER: root", want: ociUser{UID: 0, GID: 0, Home: "/root"}},
		{name: "USER by name", imageUser: "nonroot", want: ociUser{UID: 65532, GID: 65532, Home: "/home/nonroot"}},
		{name: "USER uid:gid", imageUser: "1000:50", want: ociUser{UID: 1000, GID: 50, Home: "/srv"}},
		{name: "USER name gets its groups", imageUser: "web", want: ociUser{UID: 1000, GID: 1000, Home: "/srv", Groups: []uint32{50}}},
		{name: "a uid the image does not list: gid 0", imageUser: "4242", want: ociUser{UID: 4242, GID: 0, Home: "/"}},
		{name: "runAsUser over USER", imageUser: "nonroot", sc: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}, want: ociUser{UID: 1000, GID: 1000, Home: "/srv", Groups: []uint32{50}}},
		{name: "runAsGroup with the image's user", imageUser: "nonroot", sc: &corev1.SecurityContext{RunAsGroup: ptr.To[int64](7)}, want: ociUser{UID: 65532, GID: 7, Home: "/home/nonroot"}},
		{name: "supplemental and fs groups", imageUser: "nonroot", pod: &corev1.PodSecurityContext{SupplementalGroups: []int64{9}, FSGroup: ptr.To[int64](8)}, want: ociUser{UID: 65532, GID: 65532, Home: "/home/nonroot", Groups: []uint32{9, 8}}},
		{name: "runAsNonRoot and a root image", pod: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}, fail: "image will run as root"},
		{name: "runAsNonRoot and a named user", imageUser: "nonroot", sc: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}, fail: "non-numeric user (nonroot)"},
		{name: "runAsNonRoot and a numeric user", imageUser: "65532", sc: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}, want: ociUser{UID: 65532, GID: 65532, Home: "/home/nonroot"}},
		{name: "a user the image lacks", imageUser: "ghost", fail: "ghost"},
	} {
		got, f := resolveOCIUser(rootfs, tc.imageUser, &corev1.PodSpec{SecurityContext: tc.pod}, &corev1.Container{Name: "app", SecurityContext: tc.sc}, pod)
		if tc.fail != "" {
			if f == nil || f.Reason != ReasonCreateContainerConfigError || !strings.Contains(f.Message, tc.fail) {
				t.Errorf("%s: %v, want CreateContainerConfigError saying %q", tc.name, f, tc.fail)
			}
			continue
		}
		if f != nil {
			t.Errorf("%s: %v", tc.name, f.Message)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", tc.name, d)
		}
	}
}

// TestImageNotRunnableWithoutTheEngine: where knit dev runs no images
// (not root, no runc), an image's container says what it takes.
func TestImageNotRunnableWithoutTheEngine(t *testing.T) {
	r := &replica{rt: &Runtime{}}
	var l launch
	f := r.resolveOCI(t.Context(), &corev1.Container{Name: "app", Image: "ghcr.io/team/app:1"}, &envList{}, nil, &l, 1)
	if f == nil || f.Reason != ReasonImageNotRunnable || !f.final() || !strings.Contains(f.Message, "run knit dev as root") || !strings.Contains(f.Message, "ko://") {
		t.Errorf("failure %+v: want a final ImageNotRunnable saying to run as root or use ko://", f)
	}
}

// TestOCIUserFilesStayInTheImage: an image whose /etc/passwd links out of
// it reads nothing of this machine's.
func TestOCIUserFilesStayInTheImage(t *testing.T) {
	rootfs := t.TempDir()
	outside := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(outside, []byte("host:x:4321:4321::/host:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(rootfs, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(rootfs, "etc/passwd")); err != nil {
		t.Fatal(err)
	}
	_, f := resolveOCIUser(rootfs, "host", &corev1.PodSpec{}, &corev1.Container{Name: "app"}, podIdentity{})
	if f == nil {
		t.Error("user found through a link out of the image's root")
	}
}

// FuzzImageConfig: an image's config and /etc files are its author's,
// not the user's: whatever they hold, reading them neither panics nor
// reaches outside the image's root (a working directory made there, the
// passwd file read).
func FuzzImageConfig(f *testing.F) {
	f.Add("nonroot", "/srv", "A=1", "root:x:0:0::/root:/bin/sh\nnonroot:x:65532:65532::/home/nonroot:/sbin/nologin\n")
	f.Add("1000:50", "../../../etc", "=x", "")
	f.Add("web:staff", "/a/../../b", "PATH", "web:x:1:1\n")
	f.Add(":", "", "X=y=z", "::::::\n")
	f.Fuzz(func(t *testing.T, user, workdir, env, passwd string) {
		outer := t.TempDir()
		rootfs := filepath.Join(outer, "rootfs")
		if err := os.MkdirAll(filepath.Join(rootfs, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rootfs, "etc/passwd"), []byte(passwd), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := v1.Config{User: user, WorkingDir: workdir, Env: []string{env}, Entrypoint: []string{"/app"}}
		c := &corev1.Container{Name: "app"}
		_ = ociArgv(cfg, c)
		_ = ociEnv(cfg.Env, nil)
		u, _ := resolveOCIUser(rootfs, user, &corev1.PodSpec{}, c, podIdentity{})
		dir := ociWorkingDir(cfg, c)
		if err := makeWorkingDir(rootfs, dir, u); err != nil {
			return
		}
		entries, err := os.ReadDir(outer)
		if err != nil || len(entries) != 1 {
			t.Fatalf("working directory %q made something outside the image's root: %v %v", dir, entries, err)
		}
	})
}
