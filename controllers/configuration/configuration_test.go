package configuration

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/configuration/resources"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/internal/reconciletest"
)

var key = client.ObjectKey{Namespace: "default", Name: "hello"}

func testConfiguration(mutate ...func(*servingv1.Configuration)) *servingv1.Configuration {
	cfg := &servingv1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello", UID: "cfg-uid", Generation: 2}}
	cfg.Spec.Template.Spec.Containers = []corev1.Container{{Image: "example.com/hello:v2"}}
	for _, m := range mutate {
		m(cfg)
	}
	return cfg
}

// stamped is the Revision testConfiguration stamps, with Ready as given.
func stamped(ready corev1.ConditionStatus, mutate ...func(*servingv1.Revision)) *servingv1.Revision {
	rev := resources.MakeRevision(testConfiguration())
	if ready != "" {
		rev.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: ready, Reason: "ExitCode1", Message: "exit 1"}}
	}
	for _, m := range mutate {
		m(rev)
	}
	return rev
}

// status is what a test reads back from Configuration hello.
type status struct {
	LatestCreated, LatestReady string
	Ready                      corev1.ConditionStatus
	Reason, Message            string
}

func readStatus(t *testing.T, c client.Client) status {
	t.Helper()
	cfg := &servingv1.Configuration{}
	if err := c.Get(context.Background(), key, cfg); err != nil {
		t.Fatal(err)
	}
	got := status{LatestCreated: cfg.Status.LatestCreatedRevisionName, LatestReady: cfg.Status.LatestReadyRevisionName}
	if ready := cfg.Status.GetCondition(duckv1.ConditionReady); ready != nil {
		got.Ready, got.Reason, got.Message = ready.Status, ready.Reason, ready.Message
	}
	return got
}

func revisionNames(t *testing.T, c client.Client) []string {
	t.Helper()
	revs := &servingv1.RevisionList{}
	if err := c.List(context.Background(), revs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rev := range revs.Items {
		names = append(names, rev.Name)
	}
	return names
}

func TestReconcile(t *testing.T) {
	named := func(cfg *servingv1.Configuration) { cfg.Spec.Template.Name = "hello-v2" }
	ready1 := stamped(corev1.ConditionTrue, func(r *servingv1.Revision) {
		r.Name, r.Labels[servingv1.ConfigurationGenerationLabelKey] = "hello-00001", "1"
	})
	tests := []struct {
		name    string
		objs    []client.Object
		funcs   interceptor.Funcs
		wantErr string
		want    status
		revs    []string
	}{{
		name: "create: the generation's Revision is stamped and deploys",
		objs: []client.Object{testConfiguration()},
		want: status{"hello-00002", "", corev1.ConditionUnknown, servingv1.ReasonDeploying, `waiting for Revision "hello-00002" to become ready`},
		revs: []string{"hello-00002"},
	}, {
		name: "the latest is ready",
		objs: []client.Object{testConfiguration(), ready1, stamped(corev1.ConditionTrue)},
		want: status{"hello-00002", "hello-00002", corev1.ConditionTrue, "", ""},
		revs: []string{"hello-00001", "hello-00002"},
	}, {
		name: "the latest failed: the previous stays latest ready",
		objs: []client.Object{testConfiguration(), ready1, stamped(corev1.ConditionFalse)},
		want: status{"hello-00002", "hello-00001", corev1.ConditionFalse, servingv1.ReasonRevisionFailed, `Revision "hello-00002" failed with message: exit 1`},
		revs: []string{"hello-00001", "hello-00002"},
	}, {
		name: "not owned: the template names another owner's Revision",
		objs: []client.Object{testConfiguration(named), stamped("", func(r *servingv1.Revision) { r.Name, r.OwnerReferences = "hello-v2", nil })},
		want: status{"", "", corev1.ConditionFalse, servingv1.ReasonRevisionNameTaken,
			`revision "hello-v2" already exists and belongs to another owner; give spec.template.metadata.name a new value`},
		revs: []string{"hello-v2"},
	}, {
		name: "a named Revision is immutable",
		objs: []client.Object{testConfiguration(named), stamped("", func(r *servingv1.Revision) {
			r.Name, r.Spec.Containers[0].Image = "hello-v2", "example.com/hello:v1"
		})},
		want: status{"", "", corev1.ConditionFalse, servingv1.ReasonRevisionNameTaken,
			`revision "hello-v2" exists with a different spec; revisions are immutable; give spec.template.metadata.name a new value`},
		revs: []string{"hello-v2"},
	}, {
		name:    "failure: the API server refuses the Revision",
		objs:    []client.Object{testConfiguration()},
		funcs:   interceptor.Funcs{Create: refuse(apierrors.NewForbidden(schema.GroupResource{Group: "serving.knative.dev", Resource: "revisions"}, "hello-00002", errors.New("denied by policy")))},
		wantErr: `cannot create Revision "hello-00002"`,
		want: status{"", "", corev1.ConditionFalse, owned.ReasonFailedCreate,
			`cannot create Revision "hello-00002": revisions.serving.knative.dev "hello-00002" is forbidden: denied by policy`},
	}, {
		name: "listing the Revisions fails: retried, status untouched",
		objs: []client.Object{testConfiguration(), stamped(corev1.ConditionTrue)},
		funcs: interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		}},
		wantErr: "list Revisions of default/hello: etcd is down",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.funcs, tc.objs...)
			r := &Reconciler{client: c}
			_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
			if !reconciletest.ErrMatches(err, tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, readStatus(t, c)); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if tc.funcs.List == nil {
				if diff := cmp.Diff(tc.revs, revisionNames(t, c)); diff != "" {
					t.Errorf("Revisions (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func newClient(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.Client {
	t.Helper()
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&servingv1.Configuration{}, &servingv1.Revision{}).WithInterceptorFuncs(funcs).Build()
}

func refuse(err error) func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
	return func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return err }
}

// TestReconcileRollback drives Configuration hello through a user's edits:
// each step changes the template (a new generation), reconciles so the
// Revision is stamped or found, lets the Revisions report Ready as given,
// and reconciles again, as their status changes would.
func TestReconcileRollback(t *testing.T) {
	type step struct {
		name, image string                            // the template; image "" leaves it unchanged
		ready       map[string]corev1.ConditionStatus // what the Revisions report
		want        status
	}
	const (
		True, False, Unknown = corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown
	)
	deploying := func(name string) string { return fmt.Sprintf("waiting for Revision %q to become ready", name) }
	readyA := step{"rev-a", "v1", map[string]corev1.ConditionStatus{"rev-a": True}, status{"rev-a", "rev-a", True, "", ""}}
	readyB := step{"rev-b", "v2", map[string]corev1.ConditionStatus{"rev-b": True}, status{"rev-b", "rev-b", True, "", ""}}
	backToA := step{"rev-a", "v1", nil, status{"rev-a", "rev-a", True, "", ""}}
	tests := []struct {
		name  string
		steps []step
		revs  []string
	}{{
		name:  "naming an older Revision again moves latestCreated and latestReady back to it",
		steps: []step{readyA, readyB, backToA},
		revs:  []string{"rev-a", "rev-b"},
	}, {
		name: "the Revision named again is not ready: latestReady stays until it is",
		steps: []step{readyA, readyB,
			{"rev-a", "v1", map[string]corev1.ConditionStatus{"rev-a": Unknown}, status{"rev-a", "rev-b", Unknown, servingv1.ReasonDeploying, deploying("rev-a")}},
			{"", "", map[string]corev1.ConditionStatus{"rev-a": True}, status{"rev-a", "rev-a", True, "", ""}},
		},
		revs: []string{"rev-a", "rev-b"},
	}, {
		name: "the Revision named again failed: latestReady stays",
		steps: []step{readyA, readyB,
			{"rev-a", "v1", map[string]corev1.ConditionStatus{"rev-a": False}, status{"rev-a", "rev-b", False, servingv1.ReasonRevisionFailed, `Revision "rev-a" failed with message: exit 1`}},
		},
		revs: []string{"rev-a", "rev-b"},
	}, {
		// Generation 4 measures from rev-a's generation 1, so while
		// hello-00004 deploys the newest ready Revision above it is rev-b.
		name: "an unnamed generation after a rollback: the newest ready until it is ready",
		steps: []step{readyA, readyB, backToA,
			{"", "v3", nil, status{"hello-00004", "rev-b", Unknown, servingv1.ReasonDeploying, deploying("hello-00004")}},
			{"", "", map[string]corev1.ConditionStatus{"hello-00004": True}, status{"hello-00004", "hello-00004", True, "", ""}},
		},
		revs: []string{"hello-00004", "rev-a", "rev-b"},
	}, {
		name: "the latest fails: latestReady never goes below the one it has",
		steps: []step{readyA, readyB,
			{"", "v3", map[string]corev1.ConditionStatus{"rev-b": False, "hello-00003": False}, status{"hello-00003", "rev-b", False, servingv1.ReasonRevisionFailed, `Revision "hello-00003" failed with message: exit 1`}},
		},
		revs: []string{"hello-00003", "rev-a", "rev-b"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, interceptor.Funcs{}, testConfiguration(func(cfg *servingv1.Configuration) { cfg.Generation = 0 }))
			r := &Reconciler{client: c}
			for i, s := range tc.steps {
				if s.image != "" {
					edit(t, c, s.name, "example.com/hello:"+s.image)
				}
				reconcile(t, r)
				for name, ready := range s.ready {
					report(t, c, name, ready)
				}
				reconcile(t, r)
				if diff := cmp.Diff(s.want, readStatus(t, c)); diff != "" {
					t.Fatalf("step %d: status (-want +got):\n%s", i+1, diff)
				}
			}
			if diff := cmp.Diff(tc.revs, revisionNames(t, c)); diff != "" {
				t.Errorf("Revisions (-want +got):\n%s", diff)
			}
		})
	}
}

// edit gives Configuration hello a new template, a new generation as the
// API server would count it.
func edit(t *testing.T, c client.Client, name, image string) {
	t.Helper()
	cfg := &servingv1.Configuration{}
	if err := c.Get(context.Background(), key, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Generation++
	cfg.Spec.Template.Name = name
	cfg.Spec.Template.Spec.Containers[0].Image = image
	if err := c.Update(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

// report sets a Revision's Ready as its controller would, for the
// generation it observed.
func report(t *testing.T, c client.Client, name string, ready corev1.ConditionStatus) {
	t.Helper()
	rev := &servingv1.Revision{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, rev); err != nil {
		t.Fatal(err)
	}
	rev.Status.ObservedGeneration = rev.Generation
	rev.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: ready, Reason: "ExitCode1", Message: "exit 1"}}
	if err := c.Status().Update(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
}

func reconcile(t *testing.T, r *Reconciler) {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
}
