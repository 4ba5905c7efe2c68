package revision

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/knitops/knit/api"
	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/revision/resources"
	"github.com/knitops/knit/internal/reconciletest"
)

var key = client.ObjectKey{Namespace: "default", Name: "hello-00001"}

func testRevision() *servingv1.Revision {
	rev := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", UID: "rev-uid", Generation: 1,
		Labels: map[string]string{servingv1.ConfigurationLabelKey: "hello", servingv1.ServiceLabelKey: "hello"}}}
	rev.Spec.Containers = []corev1.Container{{Image: "example.com/hello"}}
	return rev
}

// deployment is the Deployment the reconciler wants for testRevision.
func deployment(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := resources.MakeDeployment(testRevision(), resources.DeploymentConfig{QueueImage: "knit://queue", ProgressDeadlineSeconds: 600, InitialReplicas: 1})
	for _, m := range mutate {
		m(d)
	}
	return d
}

func podAutoscaler(active, sks corev1.ConditionStatus) *autoscalingv1alpha1.PodAutoscaler {
	pa := resources.MakePodAutoscaler(testRevision())
	pa.Status.Conditions = duckv1.Conditions{
		{Type: autoscalingv1alpha1.PodAutoscalerConditionActive, Status: active},
		{Type: autoscalingv1alpha1.PodAutoscalerConditionSKSReady, Status: sks},
	}
	return pa
}

// rig is a Reconciler over a fake client holding objs, failing as funcs
// say, recording Events on rec.
type rig struct {
	r   *Reconciler
	c   client.Client
	rec *events.FakeRecorder
}

func newRig(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) *rig {
	t.Helper()
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	store, err := config.NewStore("localhost")
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&servingv1.Revision{}, &autoscalingv1alpha1.PodAutoscaler{}, &appsv1.Deployment{}).
		WithIndex(&corev1.Pod{}, podRevisionIndex, podRevision).
		WithInterceptorFuncs(funcs).Build()
	rec := events.NewFakeRecorder(10)
	return &rig{r: &Reconciler{client: c, config: store, queueImage: "knit://queue", events: rec, pods: c}, c: c, rec: rec}
}

func (g *rig) events() []string {
	var out []string
	for {
		select {
		case e := <-g.rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// failCreate makes creating a kind fail with err.
func failCreate(kind client.Object, err error) interceptor.Funcs {
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if reflect.TypeOf(obj) == reflect.TypeOf(kind) {
			return err
		}
		return c.Create(ctx, obj, opts...)
	}}
}

func TestReconcile(t *testing.T) {
	type cond struct {
		Status corev1.ConditionStatus
		Reason string
	}
	quota := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "hello-00001-deployment", errors.New("exceeded quota"))
	notMine := deployment(func(d *appsv1.Deployment) { d.OwnerReferences = nil })
	tests := []struct {
		name       string
		objs       []client.Object
		funcs      interceptor.Funcs
		wantErr    string
		resources  cond
		ready      cond
		events     []string
		deployment func(*testing.T, *appsv1.Deployment)
	}{{
		name:      "create: a new Revision gets its Deployment and PodAutoscaler and deploys",
		objs:      []client.Object{testRevision()},
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying},
		ready:     cond{corev1.ConditionUnknown, servingv1.ReasonDeploying},
		deployment: func(t *testing.T, d *appsv1.Deployment) {
			if diff := cmp.Diff(deployment().Spec, d.Spec); diff != "" {
				t.Errorf("Deployment spec (-want +got):\n%s", diff)
			}
		},
	}, {
		name: "update: a drifted template is put back, the replicas stay the PodAutoscaler's",
		objs: []client.Object{testRevision(), deployment(func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "example.com/edited"
			*d.Spec.Replicas = 5
		}), podAutoscaler(corev1.ConditionUnknown, corev1.ConditionUnknown)},
		resources: cond{corev1.ConditionUnknown, servingv1.ReasonDeploying},
		ready:     cond{corev1.ConditionUnknown, servingv1.ReasonDeploying},
		deployment: func(t *testing.T, d *appsv1.Deployment) {
			if img := d.Spec.Template.Spec.Containers[0].Image; img != "example.com/hello" || *d.Spec.Replicas != 5 {
				t.Errorf("Deployment image %s replicas %d, want example.com/hello and 5", img, *d.Spec.Replicas)
			}
		},
	}, {
		name: "ready: its replicas serve and its SKS is ready",
		objs: []client.Object{testRevision(), deployment(func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }),
			podAutoscaler(corev1.ConditionTrue, corev1.ConditionTrue)},
		resources: cond{Status: corev1.ConditionTrue},
		ready:     cond{Status: corev1.ConditionTrue},
		events:    []string{"Normal RevisionReady the Revision's replicas are ready and reachable"},
	}, {
		name:      "not owned: the Deployment's name is taken",
		objs:      []client.Object{testRevision(), notMine},
		resources: cond{corev1.ConditionFalse, owned.ReasonNotOwned},
		ready:     cond{corev1.ConditionFalse, owned.ReasonNotOwned},
		events:    []string{`Warning RevisionFailed NotOwned: there is an existing Deployment "hello-00001-deployment" that we do not own`},
		deployment: func(t *testing.T, d *appsv1.Deployment) {
			if len(d.OwnerReferences) != 0 || d.Spec.Template.Spec.Containers[0].Image != "example.com/hello" {
				t.Errorf("the other owner's Deployment was changed: %+v", d.ObjectMeta)
			}
		},
	}, {
		name:      "failure: the API server refuses the Deployment",
		objs:      []client.Object{testRevision()},
		funcs:     failCreate(&appsv1.Deployment{}, quota),
		wantErr:   `cannot create Deployment "hello-00001-deployment"`,
		resources: cond{corev1.ConditionFalse, owned.ReasonFailedCreate},
		ready:     cond{corev1.ConditionFalse, owned.ReasonFailedCreate},
		events:    []string{`Warning RevisionFailed FailedCreate: cannot create Deployment "hello-00001-deployment": deployments.apps "hello-00001-deployment" is forbidden: exceeded quota`},
	}, {
		name:      "a conflict is a retry, not a failure",
		objs:      []client.Object{testRevision()},
		funcs:     failCreate(&autoscalingv1alpha1.PodAutoscaler{}, apierrors.NewConflict(schema.GroupResource{Resource: "podautoscalers"}, "hello-00001", errors.New("changed"))),
		wantErr:   "Operation cannot be fulfilled",
		resources: cond{Status: corev1.ConditionUnknown},
		ready:     cond{Status: corev1.ConditionUnknown},
	}, {
		name: "a status write that fails records nothing",
		objs: []client.Object{testRevision(), deployment(func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }),
			podAutoscaler(corev1.ConditionTrue, corev1.ConditionTrue)},
		funcs: interceptor.Funcs{SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		}},
		wantErr: "update status of Revision default/hello-00001: etcd is down",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, tc.funcs, tc.objs...)
			_, err := g.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
			if !reconciletest.ErrMatches(err, tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.events, g.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			rev := &servingv1.Revision{}
			if err := g.c.Get(context.Background(), key, rev); err != nil {
				t.Fatal(err)
			}
			if tc.resources != (cond{}) {
				get := func(ct duckv1.ConditionType) cond {
					c := rev.Status.GetCondition(ct)
					return cond{c.Status, c.Reason}
				}
				if diff := cmp.Diff([]cond{tc.resources, tc.ready}, []cond{get(servingv1.RevisionConditionResourcesAvailable), get(duckv1.ConditionReady)}); diff != "" {
					t.Errorf("ResourcesAvailable, Ready (-want +got):\n%s", diff)
				}
			}
			if tc.deployment != nil {
				d := &appsv1.Deployment{}
				if err := g.c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "hello-00001-deployment"}, d); err != nil {
					t.Fatal(err)
				}
				tc.deployment(t, d)
			}
			// A second pass over what the first wrote changes nothing and
			// records nothing.
			if err == nil {
				if _, err := g.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
					t.Fatalf("second pass: %v", err)
				}
				if got := g.events(); len(got) != 0 {
					t.Errorf("the second pass recorded %q", got)
				}
			}
		})
	}
}

func TestReconcileGoneOrDeleting(t *testing.T) {
	held := testRevision()
	held.Finalizers = []string{"example.com/hold"}
	for name, objs := range map[string][]client.Object{"gone": nil, "deleting": {held}} {
		t.Run(name, func(t *testing.T) {
			g := newRig(t, interceptor.Funcs{}, objs...)
			if len(objs) > 0 {
				// Held by its finalizer, it stays with a deletion timestamp.
				if err := g.c.Delete(context.Background(), held); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := g.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			deps := &appsv1.DeploymentList{}
			if err := g.c.List(context.Background(), deps); err != nil || len(deps.Items) != 0 {
				t.Errorf("Deployments %v (%v), want none", deps.Items, err)
			}
		})
	}
}
