package podlogs

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestPublishNode: the Node tells the API server where the endpoint is;
// a Node an earlier knit dev published under another name goes, any
// other Node stays.
func TestPublishNode(t *testing.T) {
	ctx := context.Background()
	earlier := NodeSpec{Name: "old-hostname", Port: 1}.Node(metav1.Now().Time)
	other := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "someone-else"}}
	c := fake.NewClientBuilder().WithStatusSubresource(&corev1.Node{}).WithObjects(earlier, other).Build()
	spec := NodeSpec{Name: "this-machine", Port: 10250, Labels: map[string]string{"kubernetes.io/hostname": "this-machine"}}
	for range 2 { // a restart publishes it again
		if err := PublishNode(ctx, c, spec); err != nil {
			t.Fatal(err)
		}
	}
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: "this-machine"}, n); err != nil {
		t.Fatal(err)
	}
	if n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10250 || len(n.Status.Addresses) == 0 ||
		n.Status.Addresses[0] != (corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}) ||
		n.Labels["kubernetes.io/hostname"] != "this-machine" || !publishedByKnitDev(n) {
		t.Errorf("Node = %+v", n)
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	if len(names) != 2 || names[0] != "someone-else" || names[1] != "this-machine" {
		t.Errorf("Nodes = %v, want someone-else's kept and the earlier knit dev's gone", names)
	}
}
