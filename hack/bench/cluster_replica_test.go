package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPodContainers(t *testing.T) {
	const summary = `{"pods": [
	  {"podRef": {"name": "hello-warm-00001-deployment-abc", "namespace": "knit-bench"},
	   "containers": [
	     {"name": "user-container", "memory": {"usageBytes": 4194304, "workingSetBytes": 3145728, "rssBytes": 2097152}},
	     {"name": "queue-proxy", "memory": {"usageBytes": 2097152, "workingSetBytes": 1572864, "rssBytes": 1048576}},
	     {"name": "starting", "memory": {"usageBytes": 1}}
	   ]},
	  {"podRef": {"name": "hello-warm-00001-deployment-abc", "namespace": "other"},
	   "containers": [{"name": "queue-proxy", "memory": {"usageBytes": 9, "workingSetBytes": 9, "rssBytes": 9}}]}
	]}`
	var s kubeletSummary
	if err := json.Unmarshal([]byte(summary), &s); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, namespace, pod string
		want                 []containerUsage
	}{
		{"the pod's containers with memory, by name", "knit-bench", "hello-warm-00001-deployment-abc", []containerUsage{
			{name: "queue-proxy", workingSet: 1572864, rss: 1048576, usage: 2097152},
			{name: "user-container", workingSet: 3145728, rss: 2097152, usage: 4194304},
		}},
		{"another namespace's pod of that name", "other", "hello-warm-00001-deployment-abc", []containerUsage{
			{name: "queue-proxy", workingSet: 9, rss: 9, usage: 9},
		}},
		{"no such pod", "knit-bench", "gone", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := podContainers(&s, tt.namespace, tt.pod)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(containerUsage{})); diff != "" {
				t.Errorf("podContainers (-want +got):\n%s", diff)
			}
		})
	}
}
