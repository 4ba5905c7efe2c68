package runtime

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestContainerCredential(t *testing.T) {
	pod := podIdentity{Name: "hello-00001-deployment-abc-1", Namespace: "ns", UID: "u1"}
	root := identity{uid: 0, gid: 0, confines: true}
	user := identity{uid: 1000, gid: 1000, groups: []uint32{1000, 27}}
	passwd := func(uid uint32) (passwdUser, bool) {
		if uid == 33 {
			return passwdUser{gid: 34, home: "/var/www"}, true
		}
		return passwdUser{}, false
	}
	for _, tc := range []struct {
		name       string
		pod        *corev1.PodSecurityContext
		container  *corev1.SecurityContext
		self       identity
		want       *syscall.Credential
		wantReason string
		wantMsg    string
	}{
		{name: "nothing asked, knit dev root: ko's nonroot user, never root", self: root,
			want: &syscall.Credential{Uid: imageUser, Gid: imageUser}},
		{name: "root must be asked for", self: root,
			container: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0)},
			want:      &syscall.Credential{Uid: 0, Gid: 0}},
		{name: "nothing asked, knit dev not root: itself", self: user},
		{name: "runAsNonRoot without a user, knit dev root without namespaces: refused", self: identity{},
			pod:        &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
			wantReason: ReasonCreateContainerConfigError,
			wantMsg:    `container has runAsNonRoot and image will run as root (pod: "hello-00001-deployment-abc-1_ns(u1)", container: app): knit dev runs as root without mount namespaces, so set runAsUser`},
		{name: "runAsUser alone: gid 0, no passwd entry (TestMustRunAsUser)", self: root,
			container: &corev1.SecurityContext{RunAsUser: ptr.To[int64](2020)},
			want:      &syscall.Credential{Uid: 2020, Gid: 0}},
		{name: "runAsUser alone: the passwd entry's group", self: root,
			container: &corev1.SecurityContext{RunAsUser: ptr.To[int64](33)},
			want:      &syscall.Credential{Uid: 33, Gid: 34}},
		{name: "the container's fields over the pod's, the pod's groups", self: root,
			pod: &corev1.PodSecurityContext{
				RunAsUser: ptr.To[int64](1), RunAsGroup: ptr.To[int64](2),
				SupplementalGroups: []int64{5, 6, 5}, FSGroup: ptr.To[int64](7),
			},
			container: &corev1.SecurityContext{RunAsUser: ptr.To[int64](2020)},
			want:      &syscall.Credential{Uid: 2020, Gid: 2, Groups: []uint32{5, 6, 7}}},
		{name: "runAsGroup alone, knit dev root: the nonroot user in that group", self: root,
			pod:  &corev1.PodSecurityContext{RunAsGroup: ptr.To[int64](3000)},
			want: &syscall.Credential{Uid: imageUser, Gid: 3000}},
		{name: "runAsNonRoot without a user, knit dev root: the nonroot user passes", self: root,
			pod:  &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
			want: &syscall.Credential{Uid: imageUser, Gid: imageUser}},
		{name: "runAsNonRoot with runAsUser 0: refused", self: root,
			container:  &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](0)},
			wantReason: ReasonCreateContainerConfigError,
			wantMsg:    `container's runAsUser breaks non-root policy (pod: "hello-00001-deployment-abc-1_ns(u1)", container: app)`},
		{name: "the container's runAsNonRoot false over the pod's", self: root,
			pod:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
			container: &corev1.SecurityContext{RunAsNonRoot: ptr.To(false), RunAsUser: ptr.To[int64](0)},
			want:      &syscall.Credential{Uid: 0, Gid: 0}},
		{name: "runAsNonRoot with a user", self: root,
			container: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](2020), RunAsGroup: ptr.To[int64](2020)},
			want:      &syscall.Credential{Uid: 2020, Gid: 2020}},
		{name: "runAsNonRoot, knit dev not root: it runs as itself", self: user,
			pod: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}},
		{name: "knit dev not root, asked to be itself", self: user,
			pod: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), SupplementalGroups: []int64{27}}},
		{name: "knit dev not root, asked for another user", self: user,
			container:  &corev1.SecurityContext{RunAsUser: ptr.To[int64](2020)},
			wantReason: ReasonSecurityContextUnsupported,
			wantMsg:    "container app asks to run as uid 2020, gid 0 (securityContext), which takes knit dev running as root: it runs as uid 1000, gid 1000"},
		{name: "knit dev not root, asked for a group it lacks", self: user,
			pod:        &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000)},
			wantReason: ReasonSecurityContextUnsupported,
			wantMsg:    "container app asks to run as uid 1000, gid 1000, groups [2000] (securityContext), which takes knit dev running as root: it runs as uid 1000, gid 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &corev1.PodSpec{SecurityContext: tc.pod}
			c := &corev1.Container{Name: "app", SecurityContext: tc.container}
			got, f := containerCredential(pod, spec, c, tc.self, passwd)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("credential (-want +got):\n%s", diff)
			}
			var gotReason, gotMsg string
			if f != nil {
				gotReason, gotMsg = f.Reason, f.Message
			}
			if gotReason != tc.wantReason || !strings.HasPrefix(gotMsg, tc.wantMsg) || (tc.wantMsg == "") != (gotMsg == "") {
				t.Errorf("failure = %s %q, want %s %q", gotReason, gotMsg, tc.wantReason, tc.wantMsg)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	tree := map[string]fileOwner{
		"/":                  {mode: fs.ModeDir | 0o755},
		"/root":              {mode: fs.ModeDir | 0o700},
		"/root/state":        {mode: fs.ModeDir | 0o755},
		"/root/state/app":    {mode: 0o755},
		"/srv":               {mode: fs.ModeDir | 0o750, gid: 50},
		"/srv/app":           {mode: 0o750, gid: 50},
		"/srv/mine":          {mode: 0o700, uid: 2020},
		"/srv/data":          {mode: 0o640, gid: 50},
		"/srv/notexecutable": {mode: 0o644},
	}
	stat := func(p string) (fileOwner, error) {
		if fo, ok := tree[p]; ok {
			return fo, nil
		}
		return fileOwner{}, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	user := &syscall.Credential{Uid: 2020}
	member := &syscall.Credential{Uid: 2020, Groups: []uint32{50}}
	for _, tc := range []struct {
		path string
		cred *syscall.Credential
		want fs.FileMode
		why  string
	}{
		{"/root/state/app", &syscall.Credential{}, 0o1, ""},
		{"/root/state/app", user, 0o1, "/root is drwx------, owned by uid 0, gid 0"},
		{"/srv/app", user, 0o1, "/srv is drwxr-x---, owned by uid 0, gid 50"},
		{"/srv/app", member, 0o1, ""},
		{"/srv/app", &syscall.Credential{Uid: 2020, Gid: 50}, 0o1, ""},
		{"/srv/mine", member, 0o1, ""},
		{"/srv/data", member, 0o4, ""},
		{"/srv/data", member, 0o2, "/srv/data is -rw-r-----, owned by uid 0, gid 50"},
		{"/srv/notexecutable", &syscall.Credential{}, 0o1, "/srv/notexecutable is -rw-r--r--: no one may execute it"},
		{"/srv/missing", member, 0o1, "stat /srv/missing: file does not exist"},
		{"relative", member, 0o1, "relative is not an absolute path"},
	} {
		if got := unreachable(tc.path, tc.cred, tc.want, stat); got != tc.why {
			t.Errorf("unreachable(%s, %+v, %o) = %q, want %q", tc.path, tc.cred, tc.want, got, tc.why)
		}
	}
}

func TestPasswdLookup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(path, []byte("root:x:0:0:root:/root:/bin/bash\nbroken\nwww-data:x:33:34:www-data:/var/www:/usr/sbin/nologin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lookup := passwdLookup(path)
	if u, ok := lookup(33); !ok || u != (passwdUser{gid: 34, home: "/var/www"}) {
		t.Errorf("lookup(33) = %+v %t", u, ok)
	}
	if _, ok := lookup(2020); ok {
		t.Error("lookup(2020) found a user the file does not have")
	}
	if got := homeOf(33, lookup); got != "/var/www" {
		t.Errorf("homeOf(33) = %s", got)
	}
	if got := homeOf(2020, lookup); got != "/" {
		t.Errorf("homeOf(2020) = %s, want /", got)
	}
	if _, ok := passwdLookup(filepath.Join(t.TempDir(), "none"))(0); ok {
		t.Error("a missing passwd file names users")
	}
}

func TestImagePath(t *testing.T) {
	for _, tc := range []struct {
		name      string
		container corev1.Container
		argv0     string
		want      string
	}{
		{"ko image", corev1.Container{Image: "ko://knative.dev/serving/test/test_images/runtime"}, "/root/.cache/knit/builds/k/runtime", "/ko-app/runtime"},
		{"ko image of the main module", corev1.Container{Image: "ko://."}, "/root/.cache/knit/builds/k/app", "/ko-app/app"},
		{"a command naming the ko binary", corev1.Container{Image: "ko://example.com/cmd/probe", Command: []string{"/ko-app/probe", "-x"}}, "/state/probe", "/ko-app/probe"},
		{"a command of its own", corev1.Container{Image: "ko://example.com/cmd/probe", Command: []string{"/bin/sh"}}, "/bin/sh", ""},
		{"knit image", corev1.Container{Image: "knit://queue"}, "/usr/local/bin/knit-queue", "/ko-app/knit-queue"},
		{"another image with a command", corev1.Container{Image: "nginx", Command: []string{"/usr/sbin/nginx"}}, "/usr/sbin/nginx", ""},
	} {
		if got := imagePath(&tc.container, tc.argv0); got != tc.want {
			t.Errorf("%s: imagePath = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSetEnv(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/root"}
	if diff := cmp.Diff([]string{"PATH=/bin", "HOME=/"}, setEnv(env, "HOME", "/")); diff != "" {
		t.Errorf("replace (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PATH=/bin", "HOME=/root", "X=1"}, setEnv(env, "X", "1")); diff != "" {
		t.Errorf("add (-want +got):\n%s", diff)
	}
	if env[1] != "HOME=/root" {
		t.Error("setEnv changed its argument")
	}
}
