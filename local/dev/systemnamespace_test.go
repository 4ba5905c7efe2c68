package dev

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/config"
)

// knit dev starts with Knative's ConfigMaps in knit-system, empty, as the
// chart installs them, and never touches one a user already wrote.
func TestEnsureSystemNamespaceMakesTheConfigMaps(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: "config-autoscaler"},
		Data: map[string]string{"stable-window": "6s"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mine).Build()
	ctx := context.Background()
	for range 2 { // a restart finds them all
		if err := ensureSystemNamespace(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	names := config.ConfigMapNames()
	if len(names) != 7 {
		t.Fatalf("ConfigMapNames = %v, want Knative's seven", names)
	}
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: config.SystemNamespace, Name: name}, cm); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if name == "config-autoscaler" {
			if cm.Data["stable-window"] != "6s" {
				t.Errorf("the user's config-autoscaler became %v", cm.Data)
			}
		} else if len(cm.Data) != 0 {
			t.Errorf("%s = %v, want empty (defaults)", name, cm.Data)
		}
	}
}
