package configuration

import (
	"context"
	"errors"
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

func TestReconcile(t *testing.T) {
	type status struct {
		LatestCreated, LatestReady string
		Ready                      corev1.ConditionStatus
		Reason, Message            string
	}
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
			cfg := &servingv1.Configuration{}
			if err := c.Get(context.Background(), key, cfg); err != nil {
				t.Fatal(err)
			}
			got := status{LatestCreated: cfg.Status.LatestCreatedRevisionName, LatestReady: cfg.Status.LatestReadyRevisionName}
			if ready := cfg.Status.GetCondition(duckv1.ConditionReady); ready != nil {
				got.Ready, got.Reason, got.Message = ready.Status, ready.Reason, ready.Message
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			revs := &servingv1.RevisionList{}
			if err := c.List(context.Background(), revs); err == nil {
				var names []string
				for _, rev := range revs.Items {
					names = append(names, rev.Name)
				}
				if diff := cmp.Diff(tc.revs, names); diff != "" {
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
