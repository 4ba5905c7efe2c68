package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/knitops/knit/api"
	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/podautoscaler/resources"
	"github.com/knitops/knit/internal/reconciletest"
)

var key = types.NamespacedName{Namespace: "default", Name: "hello-00001"}

// fixed recommends rec whatever it is shown, and remembers what it forgot.
type fixed struct {
	rec    Recommendation
	forgot []types.NamespacedName
}

func (f *fixed) Recommend(context.Context, *autoscalingv1alpha1.PodAutoscaler, int32, int32) Recommendation {
	return f.rec
}

func (f *fixed) Forget(pa types.NamespacedName) { f.forgot = append(f.forgot, pa) }

func testPA() *autoscalingv1alpha1.PodAutoscaler {
	return &autoscalingv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001", UID: "pa-uid", Generation: 1},
		Spec: autoscalingv1alpha1.PodAutoscalerSpec{ProtocolType: autoscalingv1alpha1.ProtocolHTTP1,
			ScaleTargetRef: corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "hello-00001-deployment"}},
	}
}

func testDeployment(replicas, ready int32) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-00001-deployment"}}
	d.Spec.Replicas, d.Status.ReadyReplicas = ptr.To(replicas), ready
	return d
}

// sks is the SKS the reconciler makes in mode, ready at its generation.
func sks(mode networkingv1alpha1.ServerlessServiceOperationMode, mutate ...func(*networkingv1alpha1.ServerlessService)) *networkingv1alpha1.ServerlessService {
	s := resources.MakeSKS(testPA(), mode, 0)
	s.Generation, s.Status.ObservedGeneration = 1, 1
	s.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func TestReconcile(t *testing.T) {
	type cond struct {
		Status corev1.ConditionStatus
		Reason string
	}
	serve := Recommendation{DesiredScale: 2, Mode: networkingv1alpha1.SKSOperationModeServe, RequeueAfter: 2 * time.Second}
	toZero := Recommendation{DesiredScale: 0, Mode: networkingv1alpha1.SKSOperationModeProxy, NumActivators: 2}
	refused := apierrors.NewForbidden(schema.GroupResource{Group: "networking.internal.knative.dev", Resource: "serverlessservices"}, "hello-00001", errors.New("denied"))
	tests := []struct {
		name                     string
		objs                     []client.Object
		rec                      Recommendation
		funcs                    interceptor.Funcs
		wantErr                  string
		requeue                  time.Duration
		initialized, sks, active cond
		replicas                 *int32 // of the Deployment, nil when it has none
		mode                     networkingv1alpha1.ServerlessServiceOperationMode
	}{{
		name: "no Deployment yet: waits for it",
		objs: []client.Object{testPA()}, rec: serve,
		initialized: cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonScaleTargetMissing},
		sks:         cond{Status: corev1.ConditionUnknown}, active: cond{Status: corev1.ConditionUnknown},
	}, {
		name: "create: the SKS in the recommended mode, the Deployment scaled to the recommendation",
		objs: []client.Object{testPA(), testDeployment(1, 0)}, rec: serve, requeue: 2 * time.Second,
		initialized: cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonQueued},
		sks:         cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonPending},
		active:      cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonQueued},
		replicas:    ptr.To[int32](2), mode: networkingv1alpha1.SKSOperationModeServe,
	}, {
		name: "active: replicas ready behind a ready SKS",
		objs: []client.Object{testPA(), testDeployment(2, 2), sks(networkingv1alpha1.SKSOperationModeServe)}, rec: serve, requeue: 2 * time.Second,
		initialized: cond{Status: corev1.ConditionTrue}, sks: cond{Status: corev1.ConditionTrue}, active: cond{Status: corev1.ConditionTrue},
		replicas: ptr.To[int32](2), mode: networkingv1alpha1.SKSOperationModeServe,
	}, {
		name: "update: to zero, the SKS goes to Proxy mode through the activators",
		objs: []client.Object{testPA(), testDeployment(2, 0), sks(networkingv1alpha1.SKSOperationModeServe)}, rec: toZero,
		// Generation 1 of the SKS was ready; the fake does not bump it.
		initialized: cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonQueued}, sks: cond{Status: corev1.ConditionTrue},
		active:   cond{corev1.ConditionUnknown, autoscalingv1alpha1.ReasonQueued},
		replicas: ptr.To[int32](0), mode: networkingv1alpha1.SKSOperationModeProxy,
	}, {
		name: "not owned: the SKS's name is taken; looked at again when the recommendation says",
		objs: []client.Object{testPA(), testDeployment(2, 2), sks(networkingv1alpha1.SKSOperationModeServe, func(s *networkingv1alpha1.ServerlessService) {
			s.OwnerReferences = nil
		})}, rec: serve, requeue: 2 * time.Second,
		initialized: cond{Status: corev1.ConditionUnknown}, sks: cond{corev1.ConditionFalse, owned.ReasonNotOwned}, active: cond{Status: corev1.ConditionUnknown},
		replicas: ptr.To[int32](2), mode: networkingv1alpha1.SKSOperationModeServe,
	}, {
		name: "failure: the API server refuses the SKS",
		objs: []client.Object{testPA(), testDeployment(2, 2)}, rec: serve,
		funcs: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return refused
		}},
		wantErr:     `cannot create ServerlessService "hello-00001"`,
		initialized: cond{Status: corev1.ConditionUnknown}, sks: cond{corev1.ConditionFalse, owned.ReasonFailedCreate}, active: cond{Status: corev1.ConditionUnknown},
		replicas: ptr.To[int32](2),
	}, {
		name: "scaling fails: retried, status untouched",
		objs: []client.Object{testPA(), testDeployment(1, 1)}, rec: serve,
		funcs: interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		}},
		wantErr:  "scale Deployment hello-00001-deployment to 2: etcd is down",
		replicas: ptr.To[int32](1),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := api.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...).
				WithStatusSubresource(&autoscalingv1alpha1.PodAutoscaler{}, &networkingv1alpha1.ServerlessService{}, &appsv1.Deployment{}).
				WithInterceptorFuncs(tc.funcs).Build()
			r := &Reconciler{client: c, recommender: &fixed{rec: tc.rec}}
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
			if !reconciletest.ErrMatches(err, tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			if res.RequeueAfter != tc.requeue {
				t.Errorf("RequeueAfter = %s, want %s", res.RequeueAfter, tc.requeue)
			}
			pa := &autoscalingv1alpha1.PodAutoscaler{}
			if err := c.Get(context.Background(), key, pa); err != nil {
				t.Fatal(err)
			}
			get := func(ct duckv1.ConditionType) cond {
				if c := pa.Status.GetCondition(ct); c != nil {
					return cond{c.Status, c.Reason}
				}
				return cond{}
			}
			got := []cond{get(autoscalingv1alpha1.PodAutoscalerConditionScaleTargetInitialized), get(autoscalingv1alpha1.PodAutoscalerConditionSKSReady), get(autoscalingv1alpha1.PodAutoscalerConditionActive)}
			if diff := cmp.Diff([]cond{tc.initialized, tc.sks, tc.active}, got); diff != "" {
				t.Errorf("ScaleTargetInitialized, SKSReady, Active (-want +got):\n%s", diff)
			}
			dep := &appsv1.Deployment{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "hello-00001-deployment"}, dep); err == nil {
				if diff := cmp.Diff(tc.replicas, dep.Spec.Replicas); diff != "" {
					t.Errorf("Deployment replicas (-want +got):\n%s", diff)
				}
			} else if tc.replicas != nil {
				t.Errorf("Deployment: %v", err)
			}
			s := &networkingv1alpha1.ServerlessService{}
			if err := c.Get(context.Background(), key, s); err == nil || tc.mode != "" {
				if s.Spec.Mode != tc.mode {
					t.Errorf("SKS mode %q, want %q", s.Spec.Mode, tc.mode)
				}
			}
		})
	}
}

// A PodAutoscaler deleted is forgotten by the recommender.
func TestReconcileForgetsTheDeleted(t *testing.T) {
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	rec := &fixed{}
	r := &Reconciler{client: fake.NewClientBuilder().WithScheme(scheme).Build(), recommender: rec}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]types.NamespacedName{key}, rec.forgot); diff != "" {
		t.Errorf("forgotten (-want +got):\n%s", diff)
	}
}

// hints records what a ScaleHinter hears, and whether the Deployment's
// write had been sent by then.
type hints struct {
	c     client.Client
	heard []string
}

func (h *hints) HintScale(dep *appsv1.Deployment, replicas int32) {
	stored := &appsv1.Deployment{}
	_ = h.c.Get(context.Background(), client.ObjectKeyFromObject(dep), stored)
	h.heard = append(h.heard, fmt.Sprintf("%s to %d, stored at %d", dep.Name, replicas, ptr.Deref(stored.Spec.Replicas, -1)))
}

// A scale-up is told to the hinter before its write; a scale-down or
// no change is not.
func TestScaleUpIsHintedBeforeItsWrite(t *testing.T) {
	for _, tc := range []struct {
		name      string
		have, rec int32
		want      []string
	}{
		{"from zero", 0, 1, []string{"hello-00001-deployment to 1, stored at 0"}},
		{"up", 2, 5, []string{"hello-00001-deployment to 5, stored at 2"}},
		{"down", 3, 1, nil},
		{"unchanged", 2, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := api.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(testPA(), testDeployment(tc.have, tc.have)).
				WithStatusSubresource(&autoscalingv1alpha1.PodAutoscaler{}, &networkingv1alpha1.ServerlessService{}, &appsv1.Deployment{}).Build()
			h := &hints{c: c}
			r := &Reconciler{client: c, recommender: &fixed{rec: Recommendation{DesiredScale: tc.rec, Mode: networkingv1alpha1.SKSOperationModeServe}}, hinter: h}
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, h.heard); diff != "" {
				t.Errorf("hints (-want +got):\n%s", diff)
			}
		})
	}
}
