package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKindList(t *testing.T) {
	var l kindList
	if err := l.Set("Service.serving.knative.dev, ConfigMap,,Deployment.apps"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Service.serving.knative.dev", "ConfigMap", "Deployment.apps"}, l.kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"deployments.apps", "Deployment/apps", "Service.Serving"} {
		if err := l.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted a misspelt kind", bad)
		}
	}
}
