package route

import (
	"testing"
	"time"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// loadedIngress serves each Route at the one version it holds.
type loadedIngress map[string]string

func (l loadedIngress) Programmed(namespace, name, resourceVersion string) bool {
	return l[namespace+"/"+name] == resourceVersion
}

func TestIngressServes(t *testing.T) {
	traffic := func(rev string) []servingv1.TrafficTarget {
		return []servingv1.TrafficTarget{{RevisionName: rev, Percent: ptr.To[int64](100)}}
	}
	status := func(rev string, ready corev1.ConditionStatus) *servingv1.RouteStatus {
		s := &servingv1.RouteStatus{}
		s.URL = "http://hello.default.example.com"
		if rev != "" {
			s.Traffic = traffic(rev)
		}
		if ready != "" {
			s.Conditions = append(s.Conditions, duckv1.Condition{Type: servingv1.RouteConditionIngressReady, Status: ready})
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		ingress IngressState
		before  *servingv1.RouteStatus
		after   string // the traffic's revision about to be written
		want    bool
	}{
		{"no ingress to ask: a cluster's", nil, status("hello-1", ""), "hello-2", true},
		{"new traffic is never served before it is written", loadedIngress{"default/hello": "5"}, status("hello-1", corev1.ConditionTrue), "hello-2", false},
		{"first traffic likewise", loadedIngress{"default/hello": "5"}, status("", ""), "hello-1", false},
		{"written, and the ingress loaded that version", loadedIngress{"default/hello": "5"}, status("hello-1", corev1.ConditionUnknown), "hello-1", true},
		{"written, the ingress still on an older version", loadedIngress{"default/hello": "4"}, status("hello-1", corev1.ConditionUnknown), "hello-1", false},
		{"Ready for the traffic it keeps stays Ready", loadedIngress{"default/hello": "4"}, status("hello-1", corev1.ConditionTrue), "hello-1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{ingress: tc.ingress}
			rt := &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello", ResourceVersion: "5"}}
			rt.Status = *status(tc.after, "")
			if got := r.ingressServes(rt, tc.before); got != tc.want {
				t.Errorf("ingressServes = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSoonest(t *testing.T) {
	for _, tc := range []struct{ a, b, want time.Duration }{
		{0, 0, 0}, {0, time.Second, time.Second}, {time.Second, 0, time.Second}, {ingressRecheck, time.Hour, ingressRecheck}, {time.Hour, ingressRecheck, ingressRecheck},
	} {
		if got := soonest(tc.a, tc.b); got != tc.want {
			t.Errorf("soonest(%s, %s) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}
