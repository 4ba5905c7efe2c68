package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// testNamespaces are the suite's own (its --test-namespace and
// --alt-test-namespace defaults), which it expects to exist.
var testNamespaces = []string{"serving-tests", "serving-tests-alt"}

// prepare makes what the suite expects of a Knative install that knit
// has no need of: its namespaces, and in knit dev a gateway Service whose
// port 80 names the ingress's loopback port as its nodePort, which is how
// the suite finds the port to dial at --ingressendpoint.
func prepare(ctx context.Context, t *target) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", t.kubeconfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	namespaces := testNamespaces
	if t.gatewayPort != 0 {
		namespaces = append(namespaces, t.gatewayNS)
	}
	for _, ns := range namespaces {
		_, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", ns, err)
		}
	}
	if t.gatewayPort == 0 {
		return nil
	}
	gateway := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: t.gatewayName, Namespace: t.gatewayNS},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeNodePort,
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: t.gatewayPort}},
		},
	}
	_, err = kube.CoreV1().Services(t.gatewayNS).Create(ctx, gateway, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("gateway Service %s/%s: %w", t.gatewayNS, t.gatewayName, err)
	}
	return nil
}
