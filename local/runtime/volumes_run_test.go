//go:build !unit

package runtime

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/view"
)

// fileAt asks an httpserver replica on port for a file at an absolute
// path in its own view: status, content, mode.
func fileAt(t *testing.T, method string, port int32, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d/files%s", port, path), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("X-Mode")
}

// onHost fails the test when path exists in this process's own view.
func notOnHost(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists on this machine (%v): a mount path leaked out of its replica", path, err)
	}
}

// TestVolumesAtTheirPaths: an app reads a ConfigMap key, a Secret key with
// its mode, a projected service-account token and writes an emptyDir, each
// at its absolute mount path, which exists for its container alone — not
// on this machine, not for a container of the replica that mounts
// nothing — and once the replica stops nothing of them is left.
func TestVolumesAtTheirPaths(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	base := "/knit-volume-test-" + ns                                      // under /, which does not have it
	scratch := filepath.Join(os.TempDir(), "knit-volume-test-"+ns, "data") // under an existing directory
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"world": "hello from a configmap"}})
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, Data: map[string][]byte{"key": []byte("s3cret"), "other": []byte("left out")}})

	app := appContainer(suiteImage(t), "/app/httpserver")
	app.VolumeMounts = []corev1.VolumeMount{
		{Name: "cfg", MountPath: base + "/hello"},
		{Name: "creds", MountPath: base + "/creds", ReadOnly: true},
		{Name: "token", MountPath: base + "/sa/token", SubPath: "token"},
		{Name: "scratch", MountPath: scratch},
	}
	sidecar := appContainer(suiteImage(t), "/app/httpserver")
	sidecar.Name, sidecar.Ports = "sidecar", []corev1.ContainerPort{{Name: "side", ContainerPort: 8081}}
	sidecar.Env[0].Value, sidecar.ReadinessProbe = "8081", nil
	d := revisionDeployment(ns, "vol", 1, app, sidecar)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "creds", Items: []corev1.KeyToPath{{Key: "key", Path: "tls/key", Mode: ptr.To[int32](0o400)}},
		}}},
		{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o444),
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: "knit-test", ExpirationSeconds: ptr.To[int64](600), Path: "token",
			}}},
		}}},
		{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	// The API server admits a projected token only for a named account.
	d.Spec.Template.Spec.ServiceAccountName = "default"
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	if err := view.Supported(); err != nil {
		// Not root on Linux: the replica says so and what it takes, naming
		// the first volume, instead of running without its volumes.
		got := waitForDeployment(t, key, 30*time.Second, ReasonVolumesUnsupported, failingWith(ReasonVolumesUnsupported))
		if msg := condition(got, appsv1.DeploymentReplicaFailure).Message; !strings.Contains(msg, `volume "cfg" at `+base+"/hello") || !strings.Contains(msg, "root on Linux") {
			t.Errorf("message = %q, want the volume, its path and what it needs", msg)
		}
		return
	}
	create(t, service(ns, "vol", map[string]string{"app": "vol"}, intstr.FromString("http")))
	create(t, service(ns, "vol-side", map[string]string{"app": "vol"}, intstr.FromString("side")))
	waitForDeployment(t, key, time.Minute, "available", available)
	port := *readySlices(t, ns, "vol", 1)[0].Ports[0].Port
	sidePort := *readySlices(t, ns, "vol-side", 1)[0].Ports[0].Port

	for _, tc := range []struct{ path, content, mode string }{
		{base + "/hello/world", "hello from a configmap", "0644"},
		{base + "/creds/tls/key", "s3cret", "0400"},
	} {
		if status, content, mode := fileAt(t, http.MethodGet, port, tc.path, ""); status != http.StatusOK || content != tc.content || mode != tc.mode {
			t.Errorf("%s: %d %q mode %s, want %q mode %s", tc.path, status, content, mode, tc.content, tc.mode)
		}
	}
	if status, content, _ := fileAt(t, http.MethodGet, port, base+"/creds/other", ""); status == http.StatusOK {
		t.Errorf("a Secret key not among the items was mounted: %q", content)
	}

	status, token, mode := fileAt(t, http.MethodGet, port, base+"/sa/token", "")
	if status != http.StatusOK || mode != "0444" {
		t.Fatalf("token: %d %q mode %s", status, token, mode)
	}
	claims := jwtClaims(t, token)
	if !slices.Contains(claims.Audience, "knit-test") || claims.Subject != "system:serviceaccount:"+ns+":default" {
		t.Errorf("token claims %+v, want audience knit-test for %s's default service account", claims, ns)
	}
	if lifetime := claims.Expiry - claims.IssuedAt; lifetime != 600 {
		t.Errorf("token lasts %ds, want the 600 asked", lifetime)
	}

	if status, body, _ := fileAt(t, http.MethodPut, port, scratch+"/testfile", "written by the app"); status != http.StatusOK {
		t.Fatalf("write to the emptyDir: %d %s", status, body)
	}
	if _, content, _ := fileAt(t, http.MethodGet, port, scratch+"/testfile", ""); content != "written by the app" {
		t.Errorf("emptyDir read back %q", content)
	}
	// ConfigMaps are mounted read-only whatever the mount says, as by the kubelet.
	if status, body, _ := fileAt(t, http.MethodPut, port, base+"/hello/world", "overwritten"); status == http.StatusOK || !strings.Contains(body, "read-only file system") {
		t.Errorf("write to the ConfigMap volume: %d %s, want a read-only file system", status, body)
	}
	// The sidecar mounts nothing, and sees none of it.
	if status, body, _ := fileAt(t, http.MethodGet, sidePort, base+"/hello/world", ""); status == http.StatusOK || !strings.Contains(body, "no such file") {
		t.Errorf("the sidecar reads the ConfigMap volume: %d %s", status, body)
	}
	notOnHost(t, base)
	notOnHost(t, filepath.Dir(scratch))

	replicaDir := onlyEntry(t, filepath.Join(suite.state, "volumes", ns))
	if err := suite.client.Delete(ctx, d); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the replica gone", func() (bool, string) {
		suite.rt.mu.Lock()
		defer suite.rt.mu.Unlock()
		_, ok := suite.rt.deployments[key]
		return !ok, "still running"
	})
	if _, err := os.Stat(replicaDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replica's volumes outlived it in %s (%v)", replicaDir, err)
	}
	notOnHost(t, base)
	notOnHost(t, filepath.Dir(scratch))
	// Root filesystems of images are mounted in knit's namespace, as
	// containerd mounts them in the host's; other tests' may be there,
	// this replica's must be gone.
	pod := filepath.Base(replicaDir)
	runs, ours := filepath.Join(suite.state, "containers")+"/", "/knit-"+pod[strings.LastIndex(pod, "-")+1:]+"-"
	var left []string
	for _, line := range mountsUnder(t, suite.state) {
		if !strings.Contains(line, " "+runs) || strings.Contains(line, ours) {
			left = append(left, line)
		}
	}
	if len(left) > 0 {
		t.Errorf("mounts left in knit's own namespace:\n%s", strings.Join(left, "\n"))
	}
}

// TestVolumeWaitsForItsConfigMap: a volume of a ConfigMap that does not
// exist holds the replica back, saying which, until it is created.
func TestVolumeWaitsForItsConfigMap(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	app := appContainer(suiteImage(t), "/app/httpserver")
	app.VolumeMounts = []corev1.VolumeMount{{Name: "settings", MountPath: "/knit-volume-test-" + ns}}
	d := revisionDeployment(ns, "late", 1, app)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "settings", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}},
	}}}
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	if view.Supported() != nil {
		waitForDeployment(t, key, 30*time.Second, ReasonVolumesUnsupported, failingWith(ReasonVolumesUnsupported))
		return
	}
	got := waitForDeployment(t, key, 30*time.Second, ReasonFailedMount, failingWith(ReasonFailedMount))
	if msg, want := condition(got, appsv1.DeploymentReplicaFailure).Message, `container user-container: volume "settings": configmap "settings": configmaps "settings" not found`; msg != want {
		t.Errorf("message = %q, want %q", msg, want)
	}
	create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"a": "b"}})
	waitForDeployment(t, key, time.Minute, "available once the ConfigMap exists", available)
}

// TestVolumesFollowTheirObjects: a running replica sees its ConfigMap
// and Secret edited, a key removed and added, without a restart; a key
// mounted by subPath keeps what it bound, and a deleted ConfigMap leaves
// the last files in place, as on Kubernetes.
func TestVolumesFollowTheirObjects(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	base := "/knit-volume-sync-" + ns
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"greeting": "hello", "old": "going"}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, Data: map[string][]byte{"password": []byte("first")}}
	create(t, cm)
	create(t, sec)
	app := appContainer(suiteImage(t), "/app/httpserver")
	app.VolumeMounts = []corev1.VolumeMount{
		{Name: "cfg", MountPath: base + "/cfg"},
		{Name: "cfg", MountPath: base + "/pinned", SubPath: "greeting"},
		{Name: "creds", MountPath: base + "/creds"},
	}
	d := revisionDeployment(ns, "volsync", 1, app)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{
		{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
	}
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	if view.Supported() != nil {
		waitForDeployment(t, key, 30*time.Second, ReasonVolumesUnsupported, failingWith(ReasonVolumesUnsupported))
		return
	}
	create(t, service(ns, "volsync", map[string]string{"app": "volsync"}, intstr.FromString("http")))
	waitForDeployment(t, key, time.Minute, "available", available)
	port := *readySlices(t, ns, "volsync", 1)[0].Ports[0].Port
	read := func(path string) string {
		status, content, _ := fileAt(t, http.MethodGet, port, path, "")
		return fmt.Sprintf("%d %s", status, content)
	}
	waitFile := func(path, want string) {
		t.Helper()
		eventually(t, 30*time.Second, path+" = "+want, func() (bool, string) {
			got := read(path)
			return got == want, got
		})
	}
	waitFile(base+"/cfg/greeting", "200 hello")
	waitFile(base+"/pinned", "200 hello")

	cm.Data = map[string]string{"greeting": "hello again", "added": "new key"}
	if err := suite.client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	sec.Data = map[string][]byte{"password": []byte("rotated")}
	if err := suite.client.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	waitFile(base+"/cfg/greeting", "200 hello again")
	waitFile(base+"/cfg/added", "200 new key")
	waitFile(base+"/creds/password", "200 rotated")
	if got := read(base + "/cfg/old"); !strings.HasPrefix(got, "404") && !strings.Contains(got, "no such file") {
		t.Errorf("a key removed from the ConfigMap is still mounted: %s", got)
	}
	if got := read(base + "/pinned"); got != "200 hello" {
		t.Errorf("the subPath mount = %s, want what it bound at start (200 hello)", got)
	}

	if err := suite.client.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	// A pass reads the volumes in order: once the Secret's next edit is
	// in, the deleted ConfigMap's volume has been read since.
	sec.Data = map[string][]byte{"password": []byte("rotated twice")}
	if err := suite.client.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	waitFile(base+"/creds/password", "200 rotated twice")
	if got := read(base + "/cfg/greeting"); got != "200 hello again" {
		t.Errorf("after the ConfigMap was deleted: %s, want its last content kept", got)
	}
	waitForDeployment(t, key, 10*time.Second, "still available", available)
}

type tokenClaims struct {
	Audience []string `json:"aud"`
	Subject  string   `json:"sub"`
	IssuedAt int64    `json:"iat"`
	Expiry   int64    `json:"exp"`
}

// jwtClaims reads a JWT's claims, unverified: the API server made it.
func jwtClaims(t *testing.T, token string) tokenClaims {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	var c tokenClaims
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err != nil {
		t.Fatalf("token claims %q: %v", raw, err)
	}
	return c
}

// onlyEntry is the one entry of dir.
func onlyEntry(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("%s: %v %v, want one replica's volumes", dir, entries, err)
	}
	return filepath.Join(dir, entries[0].Name())
}

// mountsUnder are the lines of this process's mountinfo that mount
// something under dir.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) > 4 && strings.HasPrefix(fields[4], dir) {
			out = append(out, s.Text())
		}
	}
	return out
}
