//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
)

// With config-gc set to keep nothing idle, a Revision that lost its
// traffic is collected, live from the ConfigMap, while the routed one stays.
func TestGCCollectsIdleRevisionsButNeverRoutedOnes(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41401)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00001": 100})
	updateService(t, ns, "hello", func(svc *servingv1.Service) {
		svc.Spec.Template.Spec.Containers[0].Env[0].Value = "knit"
	})
	runReplicas(t, ns, "hello-00002", 41402)
	waitTraffic(t, ns, "hello", map[string]int64{"hello-00002": 100})

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: config.GCConfigName},
		Data: map[string]string{"retain-since-create-time": "0s", "retain-since-last-active-time": "0s",
			"min-non-active-revisions": "0", "max-non-active-revisions": "5"},
	}
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	eventually(t, "idle Revision collected", func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00001"}, &servingv1.Revision{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-00002"}, &servingv1.Revision{}); err != nil {
		t.Errorf("routed Revision hello-00002: %v", err)
	}
}
