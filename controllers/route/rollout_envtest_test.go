//go:build !unit

package route

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/route/resources"
)

// TestGradualRollout: with a rollout duration on the Route, a new latest
// ready Revision takes the traffic in steps (1%, then intermediate
// splits, then all of it) and the rollout state is gone once it has;
// without one, it takes it at once.
func TestGradualRollout(t *testing.T) {
	k8s, _ := startRoutes(t)
	ctx := context.Background()
	const ns = "rollout"
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	createService(t, k8s, ns, "gradual")
	createService(t, k8s, ns, "instant")
	rt := &servingv1.Route{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gradual"}, rt); err != nil {
		t.Fatal(err)
	}
	rt.Annotations = map[string]string{config.RolloutDurationAnnotation: "4s"}
	if err := k8s.Update(ctx, rt); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gradual", "instant"} {
		eventually(t, name+" serving its first Revision", func(ctx context.Context) (bool, string) {
			split, _, err := observe(ctx, k8s, ns, name)
			return err == nil && split == name+"-00001=100", fmt.Sprint(split, err)
		})
	}

	for _, name := range []string{"gradual", "instant"} {
		newRevision(t, k8s, ns, name, name+"-00002")
	}

	var seen []string
	reasons := map[string]bool{} // IngressReady's while the traffic is split
	eventually(t, "gradual fully on its new Revision", func(ctx context.Context) (bool, string) {
		split, state, err := observe(ctx, k8s, ns, "gradual")
		reason := ingressReason(ctx, k8s, ns, "gradual")
		if err != nil {
			return false, err.Error()
		}
		if len(seen) == 0 || seen[len(seen)-1] != split {
			seen = append(seen, split)
		}
		if strings.Contains(split, " ") && reason != "" {
			reasons[reason] = true
		}
		return split == "gradual-00002=100" && state == "", fmt.Sprintf("split %s, rollout state %q", split, state)
	})
	t.Logf("splits seen: %v", seen)
	// The old Revision's whole share, then 1% on the new one, then at
	// least one split between that and the new Revision's whole share.
	if seen[0] == "gradual-00001=100" { // polled before the Route saw the new Revision
		seen = seen[1:]
	}
	if len(seen) < 3 || seen[0] != "gradual-00001=99 gradual-00002=1" {
		t.Errorf("splits seen %v, want 100 on the old Revision, 99/1, intermediate splits, 100 on the new one", seen)
	}
	eventually(t, "gradual Ready after its rollout", func(ctx context.Context) (bool, string) {
		rt := &servingv1.Route{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gradual"}, rt); err != nil {
			return false, err.Error()
		}
		c := rt.Status.GetCondition(servingv1.RouteConditionIngressReady)
		return c != nil && c.IsTrue(), fmt.Sprintf("%+v", c)
	})
	if !reasons[servingv1.ReasonRolloutInProgress] {
		t.Errorf("IngressReady reasons seen during the split %v, want %s", reasons, servingv1.ReasonRolloutInProgress)
	}
	for _, s := range seen {
		if strings.Count(s, "=") > 2 {
			t.Errorf("split %q: more than the two Revisions", s)
		}
	}

	eventually(t, "instant on its new Revision", func(ctx context.Context) (bool, string) {
		split, state, err := observe(ctx, k8s, ns, "instant")
		if err == nil && strings.Contains(split, " ") {
			t.Errorf("instant split its traffic with no rollout duration: %s", split)
		}
		return err == nil && split == "instant-00002=100" && state == "", fmt.Sprint(split, state, err)
	})
}

// observe is Route ns/name's status traffic as "revision=percent …" and
// its rollout state annotation.
func observe(ctx context.Context, k8s client.Client, ns, name string) (string, string, error) {
	rt := &servingv1.Route{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rt); err != nil {
		return "", "", err
	}
	var parts []string
	for _, t := range rt.Status.Traffic {
		if !ptr.Deref(t.LatestRevision, false) {
			return "", "", fmt.Errorf("target %+v not marked latestRevision", t)
		}
		parts = append(parts, fmt.Sprintf("%s=%d", t.RevisionName, ptr.Deref(t.Percent, 0)))
	}
	return strings.Join(parts, " "), rt.Status.Annotations[resources.RolloutAnnotation], nil
}

// newRevision creates Revision rev of Configuration name, ready, and makes
// it the Configuration's latest ready one, as the Configuration and
// Revision reconcilers would.
func newRevision(t *testing.T, k8s client.Client, ns, name, rev string) {
	t.Helper()
	ctx := context.Background()
	r := &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rev, Labels: map[string]string{
		servingv1.ServiceLabelKey: name, servingv1.ConfigurationLabelKey: name, servingv1.ConfigurationGenerationLabelKey: "2",
	}}}
	r.Spec.Containers = []corev1.Container{{Image: "example.com/hello:2"}}
	if err := k8s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status.Conditions = duckv1.Conditions{{Type: duckv1.ConditionReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	cfg := &servingv1.Configuration{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Status.LatestCreatedRevisionName, cfg.Status.LatestReadyRevisionName = rev, rev
	if err := k8s.Status().Update(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// ingressReason is Route ns/name's IngressReady reason, "" when unread.
func ingressReason(ctx context.Context, k8s client.Client, ns, name string) string {
	rt := &servingv1.Route{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rt); err != nil {
		return ""
	}
	if c := rt.Status.GetCondition(servingv1.RouteConditionIngressReady); c != nil {
		return c.Reason
	}
	return ""
}
