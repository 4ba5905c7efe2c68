package podlogs

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadyReason is the reason of knit dev's Node's Ready condition: no
// kubelet posts it, knit dev does, once, when its runtime runs.
const ReadyReason = "KnitDevRunning"

// NodeSpec is what knit dev's Node says: the runtime's identity of this
// machine and where this endpoint listens.
type NodeSpec struct {
	Name        string
	Labels      map[string]string
	Taints      []corev1.Taint
	Allocatable corev1.ResourceList
	Port        int32
}

// Node is the Node object the API server reads to reach this endpoint:
// InternalIP 127.0.0.1 (the API server prefers it) and the port as its
// kubelet endpoint.
func (s NodeSpec) Node(now time.Time) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: s.Labels},
		Spec:       corev1.NodeSpec{Taints: s.Taints},
		Status: corev1.NodeStatus{
			Capacity:    s.Allocatable,
			Allocatable: s.Allocatable,
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
				{Type: corev1.NodeHostName, Address: s.Name},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: s.Port}},
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: ReadyReason,
				Message:           "knit dev runs this node's pods as local processes; it serves their logs, nothing else of a kubelet's API",
				LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now),
			}},
		},
	}
}

// PublishNode creates or updates the Node, then writes its status (which
// only the status subresource takes), and deletes the Nodes an earlier
// knit dev published under another name (the machine was renamed).
func PublishNode(ctx context.Context, c client.Client, s NodeSpec) error {
	if err := publishNode(ctx, c, s); err != nil {
		return err
	}
	return deleteEarlierNodes(ctx, c, s.Name)
}

func publishNode(ctx context.Context, c client.Client, s NodeSpec) error {
	want := s.Node(time.Now())
	got := &corev1.Node{}
	err := c.Get(ctx, client.ObjectKey{Name: s.Name}, got)
	switch {
	case apierrors.IsNotFound(err):
		got = want.DeepCopy()
		if err := c.Create(ctx, got); err != nil {
			return fmt.Errorf("create Node %s: %w", s.Name, err)
		}
	case err != nil:
		return fmt.Errorf("read Node %s: %w", s.Name, err)
	default:
		got.Labels, got.Spec.Taints = want.Labels, want.Spec.Taints
		if err := c.Update(ctx, got); err != nil {
			return fmt.Errorf("update Node %s: %w", s.Name, err)
		}
	}
	got.Status = want.Status
	if err := c.Status().Update(ctx, got); err != nil {
		return fmt.Errorf("write status of Node %s: %w", s.Name, err)
	}
	return nil
}

// deleteEarlierNodes deletes the Nodes knit dev published (their Ready
// reason says so) but the one named keep.
func deleteEarlierNodes(ctx context.Context, c client.Client, keep string) error {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		return fmt.Errorf("list Nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if n.Name == keep || !publishedByKnitDev(n) {
			continue
		}
		if err := c.Delete(ctx, n); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete earlier Node %s: %w", n.Name, err)
		}
	}
	return nil
}

func publishedByKnitDev(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Reason == ReadyReason {
			return true
		}
	}
	return false
}
