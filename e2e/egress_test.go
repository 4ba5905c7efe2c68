//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// allowEgress lets knit reach targets (host:port) although its egress
// policy refuses loopback by default: the operator's way, an entry in
// knit-system/config-network's egress-allow. The tests' sinks and forges
// listen on loopback, so each journey allows what it runs, and only that.
func allowEgress(t *testing.T, c client.Client, targets ...string) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, client.ObjectKey{Namespace: "knit-system", Name: "config-network"}, cm)
		if apierrors.IsNotFound(err) {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "knit-system", Name: "config-network"},
				Data: map[string]string{"egress-allow": strings.Join(targets, ",")}}
			return c.Create(ctx, cm)
		}
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data["egress-allow"] = strings.Join(append(strings.Fields(strings.ReplaceAll(cm.Data["egress-allow"], ",", " ")), targets...), ",")
		return c.Update(ctx, cm)
	})
	if err != nil {
		t.Fatalf("allow egress to %v: %v", targets, err)
	}
}

// waitSinkRefused waits for an EventSink's Ready=False with EgressDenied.
func waitSinkRefused(t *testing.T, c client.Client, es *knitv1alpha1.EventSink) {
	t.Helper()
	waitFor(t, "EventSink "+es.Name+" refused by the egress policy", time.Minute, func(ctx context.Context) (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
			return false, err.Error()
		}
		ready := es.Status.GetCondition(duckv1.ConditionReady)
		return ready.IsFalse() && ready.Reason == "EgressDenied", fmt.Sprintf("%+v", ready)
	})
}

// addr is where the sink listens, host:port, as egress-allow names it.
func (s *eventSink) addr() string { return s.srv.Listener.Addr().String() }
