package resolve

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/testregistry"
)

const ns = "team"

var key = types.NamespacedName{Namespace: ns, Name: "app-00001"}

// resolveNow runs one Revision's resolution to its answer: the first
// call starts it, the wake says it is done, the next call returns it.
func resolveNow(t *testing.T, c client.Reader, req Request) ([]servingv1.ContainerStatus, error) {
	t.Helper()
	woken := make(chan types.NamespacedName, 1)
	r := New(c, nil, func(k types.NamespacedName) { woken <- k })
	req.Revision, req.UID = key, "uid-1"
	if req.Timeout == 0 {
		req.Timeout = 30 * time.Second
	}
	if statuses, err := r.Resolve(req); statuses != nil || err != nil {
		t.Fatalf("first Resolve answered at once (%v, %v); want it to work in the background", statuses, err)
	}
	select {
	case k := <-woken:
		if k != key {
			t.Fatalf("woke %v, want %v", k, key)
		}
	case <-time.After(time.Minute):
		t.Fatal("the resolver never woke the Revision")
	}
	statuses, err := r.Resolve(req)
	if statuses == nil && err == nil {
		t.Fatal("Resolve after the wake has no answer")
	}
	return statuses, err
}

func TestResolve(t *testing.T) {
	open := testregistry.Start(t, false)
	private := testregistry.Start(t, true)
	openDigest := testregistry.Push(t, open+"/team/app:1.0", v1.Config{}, map[string]testregistry.File{"hello": {Content: "one"}})
	privDigest := testregistry.Push(t, private+"/team/app:1.0", v1.Config{}, map[string]testregistry.File{"hello": {Content: "two"}})
	pinned := open + "/team/app@" + openDigest

	secret := testregistry.PullSecret(ns, "regcred", private, testregistry.User, testregistry.Password)
	wrong := testregistry.PullSecret(ns, "wrong", private, testregistry.User, "not-it")
	puller := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "puller"},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(secret, wrong, puller).Build()

	skipOpen := func(reg string) bool { return reg == open }
	tests := []struct {
		name       string
		req        Request
		want       []servingv1.ContainerStatus
		wantErrHas []string
	}{{
		name: "a tag becomes the digest it names",
		req:  Request{Containers: []corev1.Container{{Name: "app", Image: open + "/team/app:1.0"}}},
		want: []servingv1.ContainerStatus{{Name: "app", ImageDigest: pinned}},
	}, {
		name: "a digest stays as written; ko:// and knit:// are not a registry's",
		req: Request{Containers: []corev1.Container{{Name: "app", Image: pinned},
			{Name: "built", Image: "ko://example.com/cmd/hello"}, {Name: "queue", Image: "knit://queue"}}},
		want: []servingv1.ContainerStatus{{Name: "app", ImageDigest: pinned}, {Name: "built"}, {Name: "queue"}},
	}, {
		name: "a registry that skips resolving runs its tag",
		req:  Request{Containers: []corev1.Container{{Name: "app", Image: open + "/team/app:1.0"}}, Skip: skipOpen},
		want: []servingv1.ContainerStatus{{Name: "app"}},
	}, {
		name: "the pod's ServiceAccount's pull secret",
		req:  Request{Containers: []corev1.Container{{Name: "app", Image: private + "/team/app:1.0"}}, ServiceAccountName: "puller"},
		want: []servingv1.ContainerStatus{{Name: "app", ImageDigest: private + "/team/app@" + privDigest}},
	}, {
		name: "the pod's own pull secret",
		req: Request{Containers: []corev1.Container{{Name: "app", Image: private + "/team/app:1.0"}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}},
		want: []servingv1.ContainerStatus{{Name: "app", ImageDigest: private + "/team/app@" + privDigest}},
	}, {
		name:       "no credentials: the registry's word",
		req:        Request{Containers: []corev1.Container{{Name: "app", Image: private + "/team/app:1.0"}}},
		wantErrHas: []string{`Unable to fetch image "` + private + `/team/app:1.0"`, "UNAUTHORIZED"},
	}, {
		name: "wrong credentials, a missing secret skipped",
		req: Request{Containers: []corev1.Container{{Name: "app", Image: private + "/team/app:1.0"}},
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "gone"}, {Name: "wrong"}}},
		wantErrHas: []string{"UNAUTHORIZED"},
	}, {
		name:       "a tag never pushed",
		req:        Request{Containers: []corev1.Container{{Name: "app", Image: open + "/team/app:2.0"}}},
		wantErrHas: []string{`Unable to fetch image "` + open + `/team/app:2.0"`, "MANIFEST_UNKNOWN"},
	}, {
		name:       "the first container that fails is named",
		req:        Request{Containers: []corev1.Container{{Name: "app", Image: pinned}, {Name: "side", Image: open + "/team/side:1"}}},
		wantErrHas: []string{"team/side:1"},
	}, {
		name:       "not an image reference",
		req:        Request{Containers: []corev1.Container{{Name: "app", Image: "Team/App:1.0"}}},
		wantErrHas: []string{`Unable to fetch image "Team/App:1.0"`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveNow(t, c, tc.req)
			if len(tc.wantErrHas) > 0 {
				if AsError(err) == nil {
					t.Fatalf("got %v, %v; want an *Error", got, err)
				}
				for _, s := range tc.wantErrHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("container %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// A tag pushed again after resolving leaves what was resolved alone: the
// answer is the digest of the push the Revision saw.
func TestResolvePinsThePushItSaw(t *testing.T) {
	reg := testregistry.Start(t, false)
	first := testregistry.Push(t, reg+"/team/app:live", v1.Config{}, map[string]testregistry.File{"v": {Content: "1"}})
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	req := Request{Containers: []corev1.Container{{Name: "app", Image: reg + "/team/app:live"}}}
	got, err := resolveNow(t, c, req)
	if err != nil {
		t.Fatal(err)
	}
	second := testregistry.Push(t, reg+"/team/app:live", v1.Config{}, map[string]testregistry.File{"v": {Content: "2"}})
	if first == second {
		t.Fatal("the second push has the first's digest; the test pushes nothing new")
	}
	if want := reg + "/team/app@" + first; got[0].ImageDigest != want {
		t.Errorf("resolved %s, want %s", got[0].ImageDigest, want)
	}
	again, err := resolveNow(t, c, req)
	if err != nil {
		t.Fatal(err)
	}
	if want := reg + "/team/app@" + second; again[0].ImageDigest != want {
		t.Errorf("a new Revision resolved %s, want the new push %s", again[0].ImageDigest, want)
	}
}

// A registry that never answers fails the Revision when its timeout
// ends, rather than holding it (or the reconciler) forever.
func TestResolveTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hang := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(hang); _ = srv.Close() })

	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	_, err = resolveNow(t, c, Request{Containers: []corev1.Container{{Name: "app", Image: ln.Addr().String() + "/team/app:1"}},
		Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("got %v, want the deadline", err)
	}
}

// A Revision deleted and made again under its name is resolved afresh,
// not answered with its predecessor's digests.
func TestResolveStartsOverForANewUID(t *testing.T) {
	reg := testregistry.Start(t, false)
	testregistry.Push(t, reg+"/team/app:1", v1.Config{}, map[string]testregistry.File{"v": {Content: "1"}})
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	woken := make(chan types.NamespacedName, 2)
	r := New(c, nil, func(k types.NamespacedName) { woken <- k })
	req := Request{Revision: key, UID: "old", Timeout: time.Minute, Containers: []corev1.Container{{Name: "app", Image: reg + "/team/app:1"}}}
	r.Resolve(req)
	<-woken
	req.UID = "new"
	if statuses, err := r.Resolve(req); statuses != nil || err != nil {
		t.Fatalf("the new Revision got the old one's answer: %v, %v", statuses, err)
	}
	<-woken
	if statuses, err := r.Resolve(req); err != nil || len(statuses) != 1 {
		t.Fatalf("got %v, %v", statuses, err)
	}
}

// A failed Revision keeps its error until its retry is due, without
// asking the registry again, and is resolved when the image appears.
func TestResolveRetriesAfterItsDelay(t *testing.T) {
	reg := testregistry.Start(t, false)
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).Build()
	woken := make(chan types.NamespacedName, 4)
	r := New(c, nil, func(k types.NamespacedName) { woken <- k })
	req := Request{Revision: key, UID: "u", Timeout: time.Minute, Containers: []corev1.Container{{Name: "app", Image: reg + "/team/late:1"}}}
	r.Resolve(req)
	<-woken
	_, err := r.Resolve(req)
	failed := AsError(err)
	if failed == nil || failed.RetryAfter <= 0 || failed.RetryAfter > firstRetry {
		t.Fatalf("got %v; want an *Error retried within %v", err, firstRetry)
	}
	digest := testregistry.Push(t, reg+"/team/late:1", v1.Config{}, map[string]testregistry.File{"v": {Content: "1"}})
	if _, err := r.Resolve(req); AsError(err) == nil {
		t.Fatalf("before its retry is due the Revision got %v, want the same error", err)
	}
	time.Sleep(failed.RetryAfter)
	if statuses, err := r.Resolve(req); statuses != nil || err != nil {
		t.Fatalf("a due retry answered at once: %v, %v", statuses, err)
	}
	<-woken
	statuses, err := r.Resolve(req)
	if err != nil || len(statuses) != 1 || statuses[0].ImageDigest != reg+"/team/late@"+digest {
		t.Fatalf("after the push: %v, %v", statuses, err)
	}
}

func TestRetryDelay(t *testing.T) {
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{{1, time.Second}, {2, 2 * time.Second}, {4, 8 * time.Second}, {9, 256 * time.Second}, {10, maxRetry}, {1000, maxRetry}} {
		if got := retryDelay(tc.failures); got != tc.want {
			t.Errorf("retryDelay(%d) = %v, want %v", tc.failures, got, tc.want)
		}
	}
}
