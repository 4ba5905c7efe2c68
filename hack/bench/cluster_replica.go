package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// The replica part: two warm replicas of helloworld, their containers'
// memory as the kubelet accounts it (the cgroup of each container: what
// kubectl top, a memory limit and eviction see). Two, because the pages
// of an image's files are charged to the first cgroup that reads them:
// one replica pays for them, the other shows what a further one adds.
const (
	warmService = "hello-warm"
	warmHost    = warmService + "." + clusterNamespace + ".example.com"
	warmScale   = 2
	// warmRequests are sent to the replica before it idles, so its
	// queue-proxy has served, not only started.
	warmRequests = 100
	// warmIdle is long enough for the kubelet's stats to be read after
	// the last request (its housekeeping runs every 10s or so).
	warmIdle = 20 * time.Second
)

// containerUsage is one container's memory in the kubelet's summary.
type containerUsage struct {
	replica                int // 1, 2, ... in the order of the pods' names
	name                   string
	workingSet, rss, usage uint64
}

// replicaUsage deploys helloworld with min-scale warmScale, sends it
// warmRequests, lets it idle for warmIdle and reads its pods' containers
// from the kubelet's summary.
func (b *benchCluster) replicaUsage(ctx context.Context, ingress string) ([]containerUsage, error) {
	annotations := map[string]string{"autoscaling.knative.dev/min-scale": strconv.Itoa(warmScale)}
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
	if len(pods.Items) != warmScale {
		return nil, fmt.Errorf("%s has %d pods, want %d (its min-scale, idle)", warmService, len(pods.Items), warmScale)
	}
	slices.SortFunc(pods.Items, func(x, y corev1.Pod) int { return strings.Compare(x.Name, y.Name) })
	for deadline := time.Now().Add(time.Minute); ; {
		s, err := b.summary(ctx)
		if err != nil {
			return nil, err
		}
		var all []containerUsage
		for i, p := range pods.Items {
			usage := podContainers(s, clusterNamespace, p.Name)
			if len(usage) != len(p.Spec.Containers) {
				all = nil
				break
			}
			for _, u := range usage {
				u.replica = i + 1
				all = append(all, u)
			}
		}
		if all != nil {
			return all, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the kubelet's summary has no memory for every container of %s's pods", warmService)
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

// queueProxyUsage is the queue-proxy containers' rows, one a replica.
func (c *clusterResult) queueProxyUsage() []containerUsage {
	var out []containerUsage
	for _, u := range c.replica {
		if u.name == "queue-proxy" {
			out = append(out, u)
		}
	}
	return out
}
