package webhooks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestValidateRoute(t *testing.T) {
	route := func(name string, traffic ...servingv1.TrafficTarget) *servingv1.Route {
		return &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: servingv1.RouteSpec{Traffic: traffic}}
	}
	tests := []struct {
		name string
		r    *servingv1.Route
		want []string
	}{{
		name: "a split over two Revisions",
		r:    route("hello", pinned("hello-00001", 80), pinned("hello-00002", 20)),
	}, {
		name: "a bad sum and a bad name",
		r:    route("hello.world", pinned("hello-00001", 80), pinned("hello-00002", 30)),
		want: []string{
			"invalid value: hello.world: metadata.name\nnot a DNS 1035 label: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
			"invalid value: 110: spec.traffic\ntraffic targets' percents add up to 110; they must add up to 100",
		},
	}, {
		name: "http-protocol Redirected, in either spelling",
		r: withAnnotations(route("hello", pinned("hello-00001", 100)),
			"networking.knative.dev/http-protocol", "Redirected", "networking.knative.dev/httpOption", "enabled"),
	}, {
		name: "http-protocol Disabled, which Knative refuses on a Route",
		r:    withAnnotations(route("hello", pinned("hello-00001", 100)), "networking.knative.dev/http-protocol", "Disabled"),
		want: []string{`invalid value: Disabled: metadata.annotations[networking.knative.dev/http-protocol]` + "\nsupported values: \"Enabled\", \"Redirected\""},
	}, {
		name: "rollout-duration as Knative writes it",
		r:    withAnnotations(route("hello", pinned("hello-00001", 100)), "serving.knative.dev/rollout-duration", "380s"),
	}, {
		name: "rollout-duration in bare seconds",
		r:    withAnnotations(route("hello", pinned("hello-00001", 100)), "serving.knative.dev/rollout-duration", "4"),
	}, {
		name: "rollout-duration finer than a second",
		r:    withAnnotations(route("hello", pinned("hello-00001", 100)), "serving.knative.dev/rollout-duration", "1500ms"),
		want: []string{"invalid value: 1500ms: metadata.annotations[serving.knative.dev/rollout-duration]\nrollout-duration \"1500ms\" is not in whole seconds"},
	}, {
		name: "rollout-duration negative",
		r:    withAnnotations(route("hello", pinned("hello-00001", 100)), "serving.knative.dev/rollout-duration", "-1m"),
		want: []string{"invalid value: -1m: metadata.annotations[serving.knative.dev/rollout-duration]\nrollout-duration \"-1m\" is negative"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := messages(validateRoute(tc.r, nil, DefaultConfig()))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func withAnnotations(r *servingv1.Route, kv ...string) *servingv1.Route {
	r.Annotations = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Annotations[kv[i]] = kv[i+1]
	}
	return r
}
