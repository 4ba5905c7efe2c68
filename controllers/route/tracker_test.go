package route

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// fakeReconciler is a Reconciler over a fake client holding objs, with the
// indexes the manager's cache has.
func fakeReconciler(t *testing.T, objs ...client.Object) *Reconciler {
	t.Helper()
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&servingv1.Route{}, configurationIndex, referencedConfigurations).
		WithIndex(&servingv1.Route{}, revisionIndex, referencedRevisions).
		WithIndex(&servingv1.Revision{}, routeLabelIndex, labelledRoute).
		Build()
	return &Reconciler{client: c}
}

func following(ns, name, cfg string) *servingv1.Route {
	return &servingv1.Route{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       servingv1.RouteSpec{Traffic: []servingv1.TrafficTarget{{ConfigurationName: cfg, LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}},
	}
}

func pinned(ns, name string, revs ...string) *servingv1.Route {
	rt := &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, rev := range revs {
		rt.Spec.Traffic = append(rt.Spec.Traffic, servingv1.TrafficTarget{RevisionName: rev, LatestRevision: ptr.To(false)})
	}
	return rt
}

func revision(ns, name string, labels map[string]string) *servingv1.Revision {
	return &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}}
}

func configuration(ns, name, latestReady string) *servingv1.Configuration {
	cfg := &servingv1.Configuration{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	cfg.Status.LatestReadyRevisionName = latestReady
	return cfg
}

func requests(ns string, names ...string) []reconcile.Request {
	reqs := make([]reconcile.Request, len(names))
	for i, name := range names {
		reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	}
	return reqs
}

// The namespace every map test starts from: Routes following
// Configurations, pinning Revisions, splitting between both, and a
// same-named Route in another namespace that must never wake.
var routes = []client.Object{
	following("default", "hello", "hello"),
	following("default", "world", "world"),
	following("default", "also-hello", "hello"),
	pinned("default", "pinned", "hello-00001"),
	func() *servingv1.Route {
		rt := pinned("default", "split", "world-00003")
		rt.Spec.Traffic = append(rt.Spec.Traffic, servingv1.TrafficTarget{ConfigurationName: "hello", Tag: "latest"})
		return rt
	}(),
	following("other", "hello", "hello"),
	pinned("other", "pinned", "hello-00001"),
}

func TestRoutesForConfiguration(t *testing.T) {
	tests := []struct {
		name string
		cfg  *servingv1.Configuration
		want []reconcile.Request
	}{{
		name: "every Route following it, tags too",
		cfg:  configuration("default", "hello", ""),
		want: requests("default", "also-hello", "hello", "split"),
	}, {
		name: "one follower",
		cfg:  configuration("default", "world", ""),
		want: requests("default", "world"),
	}, {
		name: "no follower",
		cfg:  configuration("default", "nobody", ""),
		want: requests("default"),
	}}
	r := fakeReconciler(t, routes...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, r.routesForConfiguration(context.Background(), tt.cfg)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRoutesForRevision(t *testing.T) {
	tests := []struct {
		name string
		rev  *servingv1.Revision
		want []reconcile.Request
	}{{
		name: "pinned by name and followed through its Configuration",
		rev:  revision("default", "hello-00001", map[string]string{servingv1.ConfigurationLabelKey: "hello"}),
		want: requests("default", "also-hello", "hello", "pinned", "split"),
	}, {
		name: "pinned by name only",
		rev:  revision("default", "world-00003", nil),
		want: requests("default", "split"),
	}, {
		name: "through its Configuration only",
		rev:  revision("default", "world-00004", map[string]string{servingv1.ConfigurationLabelKey: "world"}),
		want: requests("default", "world"),
	}, {
		name: "the Route that labelled it, which no longer references it",
		rev:  revision("default", "gone-00001", map[string]string{servingv1.ConfigurationLabelKey: "gone", servingv1.RouteLabelKey: "pinned"}),
		want: requests("default", "pinned"),
	}, {
		name: "the labelling Route also found by index, once",
		rev:  revision("default", "world-00005", map[string]string{servingv1.ConfigurationLabelKey: "world", servingv1.RouteLabelKey: "world"}),
		want: requests("default", "world"),
	}, {
		name: "referenced by no Route",
		rev:  revision("default", "nobody-00001", map[string]string{servingv1.ConfigurationLabelKey: "nobody"}),
		want: requests("default"),
	}}
	r := fakeReconciler(t, routes...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, r.routesForRevision(context.Background(), tt.rev)); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func ready(status corev1.ConditionStatus, reason, message string) duckv1.Status {
	return duckv1.Status{Conditions: duckv1.Conditions{{Type: duckv1.ConditionReady, Status: status, Reason: reason, Message: message}}}
}

func TestRevisionChanged(t *testing.T) {
	base := func(change func(*servingv1.Revision)) *servingv1.Revision {
		rev := revision("default", "hello-00001", map[string]string{servingv1.ConfigurationLabelKey: "hello"})
		rev.Status.Status = ready(corev1.ConditionTrue, "", "")
		change(rev)
		return rev
	}
	tests := []struct {
		name   string
		change func(*servingv1.Revision)
		want   bool
	}{
		{"nothing", func(*servingv1.Revision) {}, false},
		{"replica counts and other status", func(r *servingv1.Revision) {
			r.Status.ActualReplicas = ptr.To[int32](3)
			r.Status.ObservedGeneration = 2
			r.Status.Conditions = append(r.Status.Conditions, duckv1.Condition{Type: "Active", Status: corev1.ConditionFalse, Reason: "NoTraffic"})
		}, false},
		{"Ready's transition time", func(r *servingv1.Revision) {
			r.Status.Conditions[0].LastTransitionTime = metav1.Now()
		}, false},
		{"annotations", func(r *servingv1.Revision) { r.Annotations = map[string]string{"a": "b"} }, false},
		{"becomes not ready", func(r *servingv1.Revision) { r.Status.Status = ready(corev1.ConditionFalse, "ExitCode1", "crashed") }, true},
		{"fails for another reason", func(r *servingv1.Revision) { r.Status.Conditions[0].Message = "OOMKilled" }, true},
		{"loses its Ready condition", func(r *servingv1.Revision) { r.Status.Conditions = nil }, true},
		{"routing state label", func(r *servingv1.Revision) { r.Labels["serving.knative.dev/routingState"] = "reserve" }, true},
		{"route label", func(r *servingv1.Revision) { r.Labels[servingv1.RouteLabelKey] = "hello" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := event.UpdateEvent{ObjectOld: base(func(*servingv1.Revision) {}), ObjectNew: base(tt.change)}
			if got := revisionChanged.Update(e); got != tt.want {
				t.Errorf("passes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConfigurationChanged(t *testing.T) {
	base := func(change func(*servingv1.Configuration)) *servingv1.Configuration {
		cfg := configuration("default", "hello", "hello-00001")
		cfg.Status.LatestCreatedRevisionName = "hello-00001"
		cfg.Status.Status = ready(corev1.ConditionTrue, "", "")
		change(cfg)
		return cfg
	}
	tests := []struct {
		name   string
		change func(*servingv1.Configuration)
		want   bool
	}{
		{"nothing", func(*servingv1.Configuration) {}, false},
		{"a new spec", func(c *servingv1.Configuration) {
			c.Generation = 2
			c.Spec.Template.Spec.Containers = []corev1.Container{{Image: "example.com/hello:v2"}}
		}, false},
		{"a new Revision created, not ready: the Route keeps it active", func(c *servingv1.Configuration) {
			c.Status.LatestCreatedRevisionName = "hello-00002"
			c.Status.ObservedGeneration = 2
		}, true},
		{"observed generation alone", func(c *servingv1.Configuration) { c.Status.ObservedGeneration = 2 }, false},
		{"a new latest ready Revision", func(c *servingv1.Configuration) { c.Status.LatestReadyRevisionName = "hello-00002" }, true},
		{"fails", func(c *servingv1.Configuration) {
			c.Status.Status = ready(corev1.ConditionFalse, "RevisionFailed", "Revision hello-00002 failed")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := event.UpdateEvent{ObjectOld: base(func(*servingv1.Configuration) {}), ObjectNew: base(tt.change)}
			if got := configurationChanged.Update(e); got != tt.want {
				t.Errorf("passes = %v, want %v", got, tt.want)
			}
		})
	}
}

// A Route's snapshot holds what it references and nothing else of its
// namespace.
func TestSnapshotReadsOnlyReferences(t *testing.T) {
	cfgLabel := func(cfg string) map[string]string { return map[string]string{servingv1.ConfigurationLabelKey: cfg} }
	rt := pinned("default", "hello", "pinned-00001", "missing-00001")
	rt.Spec.Traffic = append(rt.Spec.Traffic,
		servingv1.TrafficTarget{ConfigurationName: "hello", LatestRevision: ptr.To(true)},
		servingv1.TrafficTarget{ConfigurationName: "missing"})
	rt.Status.Traffic = []servingv1.TrafficTarget{{RevisionName: "served-00001"}}
	objs := []client.Object{
		rt,
		configuration("default", "hello", "hello-00002"),
		revision("default", "hello-00001", cfgLabel("hello")), // not latest ready, not labelled: not read
		revision("default", "hello-00002", cfgLabel("hello")),
		revision("default", "pinned-00001", cfgLabel("pinned")),
		revision("default", "served-00001", cfgLabel("served")),
		revision("default", "reserve-00001", map[string]string{servingv1.RouteLabelKey: "hello"}),
		// the rest of the namespace, and a namesake elsewhere
		configuration("default", "world", "world-00001"),
		revision("default", "world-00001", map[string]string{servingv1.ConfigurationLabelKey: "world", servingv1.RouteLabelKey: "world"}),
		configuration("other", "hello", "hello-00009"),
		revision("other", "hello-00009", map[string]string{servingv1.RouteLabelKey: "hello"}),
	}
	snap, err := fakeReconciler(t, objs...).snapshot(context.Background(), rt)
	if err != nil {
		t.Fatal(err)
	}
	got := struct{ Configurations, Revisions []string }{}
	for name, cfg := range snap.Configurations {
		got.Configurations = append(got.Configurations, cfg.Namespace+"/"+name)
	}
	for name, rev := range snap.Revisions {
		got.Revisions = append(got.Revisions, rev.Namespace+"/"+name)
	}
	slices.Sort(got.Configurations)
	slices.Sort(got.Revisions)
	want := struct{ Configurations, Revisions []string }{
		Configurations: []string{"default/hello"},
		Revisions:      []string{"default/hello-00002", "default/pinned-00001", "default/reserve-00001", "default/served-00001"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
}
