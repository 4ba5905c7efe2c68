package route

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	revresources "github.com/knitops/knit/controllers/revision/resources"
	"github.com/knitops/knit/internal/reconciletest"
)

// readyRevision is Revision name of Configuration hello, Ready as given,
// with labels (key, value, …); one routed carries when it was.
func readyRevision(name string, status corev1.ConditionStatus, labels ...string) *servingv1.Revision {
	rev := revision("default", name, map[string]string{servingv1.ConfigurationLabelKey: "hello"})
	for i := 0; i+1 < len(labels); i += 2 {
		rev.Labels[labels[i]] = labels[i+1]
		if labels[i] == revresources.RoutingStateLabelKey {
			rev.Annotations = map[string]string{RoutingStateModifiedAnnotation: "2026-11-22T12:00:00Z"}
		}
	}
	rev.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: status, Reason: "ExitCode1", Message: "exit 1"}}
	return rev
}

func helloConfiguration(latestReady, latestCreated string) *servingv1.Configuration {
	cfg := configuration("default", "hello", latestReady)
	cfg.Status.LatestCreatedRevisionName = latestCreated
	return cfg
}

func TestReconcile(t *testing.T) {
	type cond struct {
		Status corev1.ConditionStatus
		Reason string
	}
	served := []servingv1.TrafficTarget{{RevisionName: "hello-00001", LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}
	routed := func(rt *servingv1.Route) *servingv1.Route {
		rt.Status.Traffic = served
		return rt
	}
	tagged := following("default", "hello", "hello")
	tagged.Spec.Traffic = append(tagged.Spec.Traffic, servingv1.TrafficTarget{RevisionName: "hello-00001", Tag: "stable"})
	tests := []struct {
		name    string
		objs    []client.Object
		network map[string]string
		funcs   interceptor.Funcs
		wantErr string
		traffic cond
		ingress cond
		url     string
		status  []servingv1.TrafficTarget
		states  map[string]string // routing state label by Revision
		events  []string
	}{{
		name:    "first resolve: the Configuration's latest ready Revision gets the traffic",
		objs:    []client.Object{following("default", "hello", "hello"), helloConfiguration("hello-00001", "hello-00001"), readyRevision("hello-00001", corev1.ConditionTrue)},
		traffic: cond{Status: corev1.ConditionTrue}, ingress: cond{Status: corev1.ConditionTrue},
		url:    "http://hello.default.localhost:8080",
		status: served,
		states: map[string]string{"hello-00001": "active"},
		events: []string{"Normal RouteReady every traffic target is ready and the route's URLs are set"},
	}, {
		name: "a new Revision starting: the last good split keeps serving, both are active",
		objs: []client.Object{routed(following("default", "hello", "hello")), helloConfiguration("", "hello-00002"),
			readyRevision("hello-00001", corev1.ConditionTrue, revresources.RoutingStateLabelKey, "active", servingv1.RouteLabelKey, "hello"),
			readyRevision("hello-00002", corev1.ConditionUnknown)},
		traffic: cond{corev1.ConditionUnknown, servingv1.ReasonRevisionMissing}, ingress: cond{Status: corev1.ConditionUnknown},
		status: served,
		states: map[string]string{"hello-00001": "active", "hello-00002": "active"},
	}, {
		name: "moved on: the Revision it no longer routes to becomes reserve",
		objs: []client.Object{routed(pinned("default", "hello", "hello-00002")),
			readyRevision("hello-00001", corev1.ConditionTrue, revresources.RoutingStateLabelKey, "active", servingv1.RouteLabelKey, "hello"),
			readyRevision("hello-00002", corev1.ConditionTrue)},
		traffic: cond{Status: corev1.ConditionTrue}, ingress: cond{Status: corev1.ConditionTrue},
		url:    "http://hello.default.localhost:8080",
		status: []servingv1.TrafficTarget{{RevisionName: "hello-00002", LatestRevision: ptr.To(false)}},
		states: map[string]string{"hello-00001": "reserve", "hello-00002": "active"},
		events: []string{"Normal RouteReady every traffic target is ready and the route's URLs are set"},
	}, {
		name:    "a pinned Revision that failed",
		objs:    []client.Object{pinned("default", "hello", "hello-00001"), readyRevision("hello-00001", corev1.ConditionFalse)},
		traffic: cond{corev1.ConditionFalse, servingv1.ReasonRevisionFailed}, ingress: cond{Status: corev1.ConditionUnknown},
		states: map[string]string{"hello-00001": ""},
		events: []string{`Warning RouteFailed RevisionFailed: Revision "hello-00001" failed: exit 1`},
	}, {
		name:    "a Configuration not found",
		objs:    []client.Object{following("default", "hello", "hello")},
		traffic: cond{corev1.ConditionFalse, servingv1.ReasonConfigurationMissing}, ingress: cond{Status: corev1.ConditionUnknown},
		events: []string{`Warning RouteFailed ConfigurationMissing: Configuration "hello" referenced in traffic not found`},
	}, {
		name:    "a tag the domain template cannot name",
		objs:    []client.Object{tagged, helloConfiguration("hello-00001", "hello-00001"), readyRevision("hello-00001", corev1.ConditionTrue)},
		network: map[string]string{"tag-template": "{{.Tag}}-{{.Revision}}"},
		traffic: cond{Status: corev1.ConditionUnknown}, ingress: cond{corev1.ConditionFalse, servingv1.ReasonDomainTemplateError},
		states: map[string]string{"hello-00001": "active"},
		events: []string{`Warning RouteFailed DomainTemplateError: route hello tag stable URL: config-network: tag-template: template: tag:1:11: executing "tag" at <.Revision>: map has no entry for key "Revision"`},
	}, {
		name: "labelling a Revision fails: retried, status untouched",
		objs: []client.Object{following("default", "hello", "hello"), helloConfiguration("hello-00001", "hello-00001"), readyRevision("hello-00001", corev1.ConditionTrue)},
		funcs: interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		}},
		wantErr: "label Revision hello-00001 active: etcd is down",
		states:  map[string]string{"hello-00001": ""},
	}, {
		name: "the status write fails: no Event",
		objs: []client.Object{following("default", "hello", "hello"), helloConfiguration("hello-00001", "hello-00001"), readyRevision("hello-00001", corev1.ConditionTrue)},
		funcs: interceptor.Funcs{SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return apierrors.NewServiceUnavailable("etcd is down")
		}},
		wantErr: "update status of Route default/hello: etcd is down",
		states:  map[string]string{"hello-00001": "active"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := api.NewScheme()
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...).
				WithStatusSubresource(&servingv1.Route{}, &servingv1.Revision{}, &servingv1.Configuration{}).
				WithIndex(&servingv1.Route{}, configurationIndex, referencedConfigurations).
				WithIndex(&servingv1.Route{}, revisionIndex, referencedRevisions).
				WithIndex(&servingv1.Revision{}, routeLabelIndex, labelledRoute).
				WithInterceptorFuncs(tc.funcs).Build()
			store, err := config.NewStore("localhost")
			if err != nil {
				t.Fatal(err)
			}
			if tc.network != nil {
				if err := store.Update(config.NetworkConfigName, tc.network); err != nil {
					t.Fatal(err)
				}
			}
			rec := events.NewFakeRecorder(10)
			r := &Reconciler{client: c, config: store, urlPort: 8080, events: rec}
			_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "default", Name: "hello"}})
			if !reconciletest.ErrMatches(err, tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want %q", err, tc.wantErr)
			}
			got := reconciletest.Events(rec)
			if diff := cmp.Diff(tc.events, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			rt := &servingv1.Route{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "hello"}, rt); err != nil {
				t.Fatal(err)
			}
			if tc.traffic != (cond{}) {
				get := func(ct duckv1.ConditionType) cond {
					c := rt.Status.GetCondition(ct)
					return cond{c.Status, c.Reason}
				}
				if diff := cmp.Diff([]cond{tc.traffic, tc.ingress}, []cond{get(servingv1.RouteConditionAllTrafficAssigned), get(servingv1.RouteConditionIngressReady)}); diff != "" {
					t.Errorf("AllTrafficAssigned, IngressReady (-want +got):\n%s", diff)
				}
				if rt.Status.URL != tc.url {
					t.Errorf("URL = %q, want %q", rt.Status.URL, tc.url)
				}
				if diff := cmp.Diff(tc.status, rt.Status.Traffic); diff != "" {
					t.Errorf("status traffic (-want +got):\n%s", diff)
				}
			}
			for name, want := range tc.states {
				rev := &servingv1.Revision{}
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, rev); err != nil {
					t.Fatal(err)
				}
				if got := rev.Labels[revresources.RoutingStateLabelKey]; got != want {
					t.Errorf("Revision %s routing state %q, want %q", name, got, want)
				}
				if want != "" && (rev.Labels[servingv1.RouteLabelKey] != "hello" || rev.Annotations[RoutingStateModifiedAnnotation] == "") {
					t.Errorf("Revision %s labels %v annotations %v, want the Route's label and when its state changed", name, rev.Labels, rev.Annotations)
				}
			}
		})
	}
}
