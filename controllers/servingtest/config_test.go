//go:build !unit

package servingtest

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knitops/knit/config"
)

// Editing config-domain changes Route URLs live; a broken edit is ignored
// and the last good domain stays.
func TestConfigDomainIsWatchedLive(t *testing.T) {
	ns := namespace(t)
	ctx := context.Background()
	if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
		t.Fatal(err)
	}
	runReplicas(t, ns, "hello-00001", 41501)
	waitURL(t, ns, "http://hello."+ns+".localhost:8080")

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.SystemNamespace, Name: config.DomainConfigName},
		Data:       map[string]string{"example.org": ""},
	}
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), cm) })
	waitURL(t, ns, "http://hello."+ns+".example.org:8080")

	cm.Data = map[string]string{"bad.org": "not a selector"}
	if err := k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"example.net": ""}
	if err := k8s.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitURL(t, ns, "http://hello."+ns+".example.net:8080")
}

func waitURL(t *testing.T, ns, want string) {
	t.Helper()
	eventually(t, "Service URL "+want, func(ctx context.Context) (bool, string) {
		svc, err := getService(ctx, ns, "hello")
		if err != nil {
			return false, err.Error()
		}
		return svc.Status.URL == want, "URL " + svc.Status.URL
	})
}
