package resources

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

func TestURLs(t *testing.T) {
	parse := func(network map[string]string) *config.Config {
		cfg, err := config.Parse(map[string]map[string]string{config.NetworkConfigName: network}, "localhost")
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	traffic := []servingv1.TrafficTarget{
		{RevisionName: "hello-00002", Percent: ptr.To[int64](100)},
		{RevisionName: "hello-00001", Tag: "stable"},
	}
	type result struct {
		URL, Address string
		Traffic      []servingv1.TrafficTarget
		Err          string
	}
	withURLs := func(stable string) []servingv1.TrafficTarget {
		out := []servingv1.TrafficTarget{traffic[0], traffic[1]}
		out[1].URL = stable
		return out
	}
	const address = "http://hello.default.svc.cluster.local"
	tests := []struct {
		name    string
		labels  map[string]string
		network map[string]string
		port    int
		private map[string]bool
		want    result
	}{{
		name: "knit dev's ingress port shows",
		port: 8080,
		want: result{"http://hello.default.localhost:8080", address, withURLs("http://stable-hello.default.localhost:8080"), ""},
	}, {
		name: "port 80 does not",
		port: 80,
		want: result{"http://hello.default.localhost", address, withURLs("http://stable-hello.default.localhost"), ""},
	}, {
		name:    "config-network's templates and scheme",
		network: map[string]string{"domain-template": "{{.Name}}-{{.Namespace}}.{{.Domain}}", "tag-template": "{{.Name}}-{{.Tag}}", "default-external-scheme": "https"},
		want:    result{"https://hello-default.localhost", address, withURLs("https://hello-stable-default.localhost"), ""},
	}, {
		name:   "cluster-local: in-cluster host, http, no port",
		labels: map[string]string{servingv1.VisibilityLabelKey: "cluster-local"},
		port:   8080,
		want:   result{"http://hello.default.svc.cluster.local", address, withURLs("http://stable-hello.default.svc.cluster.local"), ""},
	}, {
		name:    "a private tag: in-cluster host for it alone",
		port:    8080,
		private: map[string]bool{"stable": true},
		want:    result{"http://hello.default.localhost:8080", address, withURLs("http://stable-hello.default.svc.cluster.local"), ""},
	}, {
		name:    "a tag template that fails on a tag",
		network: map[string]string{"tag-template": "{{.Tag}}-{{.Revision}}"},
		want:    result{Err: "route hello tag stable URL: config-network: tag-template: template: tag:1:11: executing \"tag\" at <.Revision>: map has no entry for key \"Revision\""},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := &servingv1.Route{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello", Labels: tc.labels}}
			url, addr, out, err := URLs(rt, traffic, parse(tc.network), tc.port, tc.private)
			got := result{URL: url, Address: addr, Traffic: out}
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("URLs (-want +got):\n%s", diff)
			}
		})
	}
}
