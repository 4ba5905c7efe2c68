package service

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/service/resources"
	"github.com/knitops/knit/internal/reconciletest"
)

var key = client.ObjectKey{Namespace: "default", Name: "hello"}

func testService() *servingv1.Service {
	svc := &servingv1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello", UID: "svc-uid", Generation: 1}}
	svc.Spec.Template.Spec.Containers = []corev1.Container{{Image: "example.com/hello"}}
	svc.Spec.Traffic = []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
	return svc
}

var ready = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}

// configuration is the Service's Configuration, observed at its generation.
func configuration(mutate ...func(*servingv1.Configuration)) *servingv1.Configuration {
	cfg := resources.MakeConfiguration(testService())
	cfg.Generation, cfg.Status.ObservedGeneration = 1, 1
	cfg.Status.LatestCreatedRevisionName, cfg.Status.LatestReadyRevisionName = "hello-00001", "hello-00001"
	for _, m := range mutate {
		m(cfg)
	}
	return cfg
}

func route(mutate ...func(*servingv1.Route)) *servingv1.Route {
	rt := resources.MakeRoute(testService())
	rt.Generation, rt.Status.ObservedGeneration = 1, 1
	rt.Status.URL = "http://hello.default.localhost"
	for _, m := range mutate {
		m(rt)
	}
	return rt
}

func TestReconcile(t *testing.T) {
	type cond struct {
		Status          corev1.ConditionStatus
		Reason, Message string
	}
	readyCfg := configuration(func(c *servingv1.Configuration) { c.Status.Conditions = ready })
	readyRoute := route(func(r *servingv1.Route) { r.Status.Conditions = ready })
	outOfDate := cond{corev1.ConditionUnknown, servingv1.ReasonOutOfDate, "waiting for the latest spec to be observed"}
	tests := []struct {
		name           string
		objs           []client.Object
		funcs          interceptor.Funcs
		wantErr        string
		cfg, rt, ready cond
		events         []string
		check          func(*testing.T, client.Client, *servingv1.Service)
	}{{
		name: "create: the Configuration and Route are made, not yet observed",
		objs: []client.Object{testService()},
		cfg:  outOfDate, rt: outOfDate, ready: outOfDate,
		check: func(t *testing.T, c client.Client, _ *servingv1.Service) {
			for _, obj := range []client.Object{&servingv1.Configuration{}, &servingv1.Route{}} {
				if err := c.Get(context.Background(), key, obj); err != nil {
					t.Errorf("%T: %v", obj, err)
				}
			}
		},
	}, {
		name: "update: a Configuration edited by hand is put back",
		objs: []client.Object{testService(), configuration(func(c *servingv1.Configuration) {
			c.Spec.Template.Spec.Containers[0].Image = "example.com/edited"
			c.Status.Conditions = ready
		}), readyRoute},
		// Its status is of the old spec until it observes the new one.
		cfg: cond{Status: corev1.ConditionTrue}, rt: cond{Status: corev1.ConditionTrue}, ready: cond{Status: corev1.ConditionTrue},
		events: []string{"Normal ServiceReady the Service's Configuration and Route are ready"},
		check: func(t *testing.T, c client.Client, _ *servingv1.Service) {
			cfg := &servingv1.Configuration{}
			if err := c.Get(context.Background(), key, cfg); err != nil || cfg.Spec.Template.Spec.Containers[0].Image != "example.com/hello" {
				t.Errorf("Configuration %+v (%v), want the Service's template back", cfg.Spec.Template.Spec.Containers, err)
			}
		},
	}, {
		// Knative's TestAnnotationPropagation: an annotation-only change
		// of the Service (no new generation of the children) is copied to
		// both, kubectl's last-applied-configuration left out.
		name: "annotations: one added to the Service reaches both children, one removed leaves them",
		objs: []client.Object{func() *servingv1.Service {
			svc := testService()
			svc.Annotations = map[string]string{"juicy": "jamba", "kubectl.kubernetes.io/last-applied-configuration": "{}"}
			return svc
		}(), configuration(func(c *servingv1.Configuration) {
			c.Annotations = map[string]string{"removed": "x"}
			c.Status.Conditions = ready
		}), route(func(r *servingv1.Route) {
			r.Annotations = map[string]string{"removed": "x"}
			r.Status.Conditions = ready
		})},
		cfg: cond{Status: corev1.ConditionTrue}, rt: cond{Status: corev1.ConditionTrue}, ready: cond{Status: corev1.ConditionTrue},
		events: []string{"Normal ServiceReady the Service's Configuration and Route are ready"},
		check: func(t *testing.T, c client.Client, _ *servingv1.Service) {
			want := map[string]string{"juicy": "jamba"}
			for _, obj := range []client.Object{&servingv1.Configuration{}, &servingv1.Route{}} {
				if err := c.Get(context.Background(), key, obj); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, obj.GetAnnotations()); diff != "" {
					t.Errorf("%T annotations (-want +got):\n%s", obj, diff)
				}
			}
		},
	}, {
		// Knative's "traffic not yet migrated": the Configuration's new
		// revision is ready but the Route still serves the old one.
		name: "route behind: the latest ready revision is not yet served, so not Ready",
		objs: []client.Object{testService(),
			configuration(func(c *servingv1.Configuration) {
				c.Status.Conditions = ready
				c.Status.LatestCreatedRevisionName, c.Status.LatestReadyRevisionName = "hello-00002", "hello-00002"
			}),
			route(func(r *servingv1.Route) {
				r.Status.Conditions = ready
				r.Status.Traffic = []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
			})},
		cfg: cond{Status: corev1.ConditionTrue}, rt: outOfDate, ready: outOfDate,
	}, {
		// Knative's TestGradualRollout: while the Route spreads the move
		// to the new revision over rollout-duration it is not Ready and
		// says why; RoutesReady mirrors that rather than "out of date".
		name: "gradual rollout: RoutesReady says RolloutInProgress",
		objs: []client.Object{testService(),
			configuration(func(c *servingv1.Configuration) {
				c.Status.Conditions = ready
				c.Status.LatestCreatedRevisionName, c.Status.LatestReadyRevisionName = "hello-00002", "hello-00002"
			}),
			route(func(r *servingv1.Route) {
				r.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionUnknown, Reason: "RolloutInProgress", Message: "rolling out"}}
				r.Status.Traffic = []servingv1.TrafficTarget{
					{RevisionName: "hello-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](67)},
					{RevisionName: "hello-00002", LatestRevision: ptr.To(true), Percent: ptr.To[int64](33)},
				}
			})},
		cfg: cond{Status: corev1.ConditionTrue}, rt: cond{corev1.ConditionUnknown, "RolloutInProgress", "rolling out"},
		ready: cond{corev1.ConditionUnknown, "RolloutInProgress", "rolling out"},
	}, {
		name: "ready: both children ready; the Service shows their status",
		objs: []client.Object{testService(), readyCfg, readyRoute},
		cfg:  cond{Status: corev1.ConditionTrue}, rt: cond{Status: corev1.ConditionTrue}, ready: cond{Status: corev1.ConditionTrue},
		events: []string{"Normal ServiceReady the Service's Configuration and Route are ready"},
		check: func(t *testing.T, _ client.Client, svc *servingv1.Service) {
			if svc.Status.URL != "http://hello.default.localhost" || svc.Status.LatestReadyRevisionName != "hello-00001" || svc.Status.ObservedGeneration != 1 {
				t.Errorf("status %+v, want the Route's URL and the Configuration's Revisions", svc.Status)
			}
		},
	}, {
		name: "a child's failure is the Service's",
		objs: []client.Object{testService(), configuration(func(c *servingv1.Configuration) {
			c.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionFalse, Reason: servingv1.ReasonRevisionFailed, Message: "exit 1"}}
		}), readyRoute},
		cfg: cond{corev1.ConditionFalse, servingv1.ReasonRevisionFailed, "exit 1"}, rt: cond{Status: corev1.ConditionTrue},
		ready:  cond{corev1.ConditionFalse, servingv1.ReasonRevisionFailed, "exit 1"},
		events: []string{"Warning ServiceFailed RevisionFailed: exit 1"},
	}, {
		name: "not owned: the Route's name is taken; no retry until the user acts",
		objs: []client.Object{testService(), readyCfg, route(func(r *servingv1.Route) { r.OwnerReferences = nil })},
		cfg:  cond{Status: corev1.ConditionTrue},
		rt: cond{corev1.ConditionFalse, owned.ReasonNotOwned,
			`there is an existing Route "hello" that we do not own; delete it or rename the Service`},
		ready: cond{corev1.ConditionFalse, owned.ReasonNotOwned,
			`there is an existing Route "hello" that we do not own; delete it or rename the Service`},
		events: []string{`Warning ServiceFailed NotOwned: there is an existing Route "hello" that we do not own; delete it or rename the Service`},
	}, {
		name: "failure: the API server refuses the Route",
		objs: []client.Object{testService(), readyCfg},
		funcs: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "serving.knative.dev", Resource: "routes"}, "hello", errors.New("denied by policy"))
		}},
		wantErr: `cannot create Route "hello"`,
		cfg:     cond{Status: corev1.ConditionTrue},
		rt:      cond{corev1.ConditionFalse, owned.ReasonFailedCreate, `cannot create Route "hello": routes.serving.knative.dev "hello" is forbidden: denied by policy`},
		ready:   cond{corev1.ConditionFalse, owned.ReasonFailedCreate, `cannot create Route "hello": routes.serving.knative.dev "hello" is forbidden: denied by policy`},
		events:  []string{`Warning ServiceFailed FailedCreate: cannot create Route "hello": routes.serving.knative.dev "hello" is forbidden: denied by policy`},
	}, {
		name: "a read that fails is retried, Unknown meanwhile",
		objs: []client.Object{testService(), readyCfg, readyRoute},
		funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*servingv1.Configuration); ok {
				return apierrors.NewServiceUnavailable("etcd is down")
			}
			return c.Get(ctx, key, obj, opts...)
		}},
		wantErr: "get Configuration hello: etcd is down",
		cfg:     cond{corev1.ConditionUnknown, servingv1.ReasonReconcileError, "get Configuration hello: etcd is down"},
		rt:      cond{Status: corev1.ConditionTrue},
		ready:   cond{corev1.ConditionUnknown, servingv1.ReasonReconcileError, "get Configuration hello: etcd is down"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := api.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			if tc.funcs.Create == nil {
				tc.funcs.Create = createdAtGeneration1
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...).
				WithStatusSubresource(&servingv1.Service{}, &servingv1.Configuration{}, &servingv1.Route{}).WithInterceptorFuncs(tc.funcs).Build()
			rec := events.NewFakeRecorder(10)
			r := &Reconciler{client: c, events: rec}
			_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
			if !reconciletest.ErrMatches(err, tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			got := reconciletest.Events(rec)
			if diff := cmp.Diff(tc.events, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			svc := &servingv1.Service{}
			if err := c.Get(context.Background(), key, svc); err != nil {
				t.Fatal(err)
			}
			get := func(ct duckv1.ConditionType) cond {
				c := svc.Status.GetCondition(ct)
				return cond{c.Status, c.Reason, c.Message}
			}
			gotConds := []cond{get(servingv1.ServiceConditionConfigurationsReady), get(servingv1.ServiceConditionRoutesReady), get(duckv1.ConditionReady)}
			if diff := cmp.Diff([]cond{tc.cfg, tc.rt, tc.ready}, gotConds); diff != "" {
				t.Errorf("ConfigurationsReady, RoutesReady, Ready (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, c, svc)
			}
		})
	}
}

// createdAtGeneration1 creates obj at generation 1, as the API server does
// and the fake client does not.
func createdAtGeneration1(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	obj.SetGeneration(1)
	return c.Create(ctx, obj, opts...)
}
