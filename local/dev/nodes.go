package dev

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// refuseClusterWithNodes stops knit dev --kubeconfig from taking over a
// cluster that has kubelets: its Deployments would run twice, once on the
// nodes and once as knit dev's local processes. Such a cluster gets knit
// through the Helm chart.
func refuseClusterWithNodes(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("client for --kubeconfig: %w", err)
	}
	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		return fmt.Errorf("list nodes of %s: %w", cfg.Host, err)
	}
	return nodesError(cfg.Host, readyNodes(nodes.Items))
}

// readyNodes names the nodes whose Ready condition is True.
func readyNodes(nodes []corev1.Node) []string {
	var ready []string
	for _, n := range nodes {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = append(ready, n.Name)
			}
		}
	}
	return ready
}

// nodesError is nil for a cluster without Ready nodes (an API server knit
// dev may run replicas for), and otherwise says what to do instead.
func nodesError(host string, ready []string) error {
	if len(ready) == 0 {
		return nil
	}
	return fmt.Errorf("the cluster at %s has %d Ready node(s) (%s): knit dev runs replicas as local processes and "+
		"would run every revision a second time beside its pods. Install knit on that cluster instead: "+
		"helm install knit charts/knit -n knit-system --create-namespace (README: \"Run on a Kubernetes cluster\")",
		host, len(ready), strings.Join(ready, ", "))
}
