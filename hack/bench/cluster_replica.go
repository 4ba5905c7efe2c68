package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// The replica part: one warm replica of helloworld, its containers'
// memory as the kubelet accounts it (the cgroup of each container: what
// kubectl top, a memory limit and eviction see).
const (
	warmService = "hello-warm"
	warmHost    = warmService + "." + clusterNamespace + ".example.com"
	// warmRequests are sent to the replica before it idles, so its
	// queue-proxy has served, not only started.
	warmRequests = 100
	// warmIdle is long enough for the kubelet's stats to be read after
	// the last request (its housekeeping runs every 10s or so).
	warmIdle = 20 * time.Second
)

// containerUsage is one container's memory in the kubelet's summary.
type containerUsage struct {
	name                   string
	workingSet, rss, usage uint64
}

// replicaUsage deploys helloworld with min-scale 1, sends it warmRequests,
// lets it idle for warmIdle and reads its pod's containers from the
// kubelet's summary.
func (b *benchCluster) replicaUsage(ctx context.Context, ingress string) ([]containerUsage, error) {
	annotations := map[string]string{"autoscaling.knative.dev/min-scale": "1"}
	if err := b.deploy(ctx, ingress, warmService, annotations); err != nil {
		return nil, err
	}
	for i := range warmRequests {
		conn, err := net.Dial("tcp", ingress)
		if err != nil {
			return nil, err
		}
		if _, err := firstByteFrom(conn, warmHost, helloBody, time.Time{}, time.Now().Add(requestTimeout)); err != nil {
			return nil, fmt.Errorf("request %d: %w", i+1, err)
		}
	}
	fmt.Fprintf(b.progress, "cluster: a warm replica idles for %s\n", warmIdle)
	if err := sleep(ctx, warmIdle); err != nil {
		return nil, err
	}
	pods, err := b.k.CoreV1().Pods(clusterNamespace).List(ctx, metav1.ListOptions{LabelSelector: servingv1.ServiceLabelKey + "=" + warmService})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) != 1 {
		return nil, fmt.Errorf("%s has %d pods, want 1 (min-scale 1, idle)", warmService, len(pods.Items))
	}
	pod := pods.Items[0].Name
	for deadline := time.Now().Add(time.Minute); ; {
		s, err := b.summary(ctx)
		if err != nil {
			return nil, err
		}
		if usage := podContainers(s, clusterNamespace, pod); len(usage) == len(pods.Items[0].Spec.Containers) {
			return usage, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the kubelet's summary has no memory for pod %s's containers", pod)
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return nil, err
		}
	}
}

// summary is the kubelet's /stats/summary of the cluster's one node,
// through the API server's node proxy.
func (b *benchCluster) summary(ctx context.Context) (*kubeletSummary, error) {
	nodes, err := b.k.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		return nil, fmt.Errorf("nodes: %v", err)
	}
	raw, err := b.k.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", nodes.Items[0].Name, "proxy", "stats", "summary").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	var s kubeletSummary
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// podContainers is the memory of every container of one pod that the
// summary has memory for, sorted by name.
func podContainers(s *kubeletSummary, namespace, pod string) []containerUsage {
	var out []containerUsage
	for _, p := range s.Pods {
		if p.PodRef.Namespace != namespace || p.PodRef.Name != pod {
			continue
		}
		for _, c := range p.Containers {
			if m := c.Memory; m != nil && m.WorkingSetBytes != nil && m.RSSBytes != nil && m.UsageBytes != nil {
				out = append(out, containerUsage{name: c.Name, workingSet: *m.WorkingSetBytes, rss: *m.RSSBytes, usage: *m.UsageBytes})
			}
		}
	}
	slices.SortFunc(out, func(x, y containerUsage) int { return strings.Compare(x.name, y.name) })
	return out
}

// queueProxyUsage is the queue-proxy container's row; ok is false when the
// run did not measure it.
func (c *clusterResult) queueProxyUsage() (containerUsage, bool) {
	for _, u := range c.replica {
		if u.name == "queue-proxy" {
			return u, true
		}
	}
	return containerUsage{}, false
}
