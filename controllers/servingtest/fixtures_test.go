//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	networkingv1alpha1 "github.com/knitops/knit/api/networking/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/internal/names"
)

// namespace creates a fresh namespace for one test.
func namespace(t *testing.T) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-")
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

// helloService is a Service as the admission webhook would have
// defaulted it (the webhooks are tested on their own).
func helloService(ns, name, target string) *servingv1.Service {
	return &servingv1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: servingv1.ServiceSpec{
			ConfigurationSpec: servingv1.ConfigurationSpec{Template: servingv1.RevisionTemplateSpec{
				Spec: servingv1.RevisionSpec{
					PodSpec: servingv1.PodSpec{Containers: []corev1.Container{{
						Name: "user-container", Image: "ko://example.com/hello",
						Env:   []corev1.EnvVar{{Name: "TARGET", Value: target}},
						Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
					}}},
					ContainerConcurrency: ptr.To[int64](0),
					TimeoutSeconds:       ptr.To[int64](300),
				},
			}},
			RouteSpec: servingv1.RouteSpec{Traffic: []servingv1.TrafficTarget{{LatestRevision: ptr.To(true), Percent: ptr.To[int64](100)}}},
		},
	}
}

// runReplicas plays the local runtime for a Revision: marks its
// Deployment's replicas ready and publishes the private endpoint, a
// slice with the labels the endpointslice controller copies from the
// private Service (which may not exist yet: its SKS may fail to make it).
func runReplicas(t *testing.T, ns, rev string, port int32) {
	t.Helper()
	runReplicasOn(t, k8s, ns, rev, port)
}

// runReplicasOn is runReplicas on the API server k8s reaches.
func runReplicasOn(t *testing.T, k8s client.Client, ns, rev string, port int32) {
	t.Helper()
	ctx := context.Background()
	dep := &appsv1.Deployment{}
	eventually(t, "Deployment of "+rev, func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Deployment(rev)}, dep)
		return err == nil, fmt.Sprint(err)
	})
	dep.Status = appsv1.DeploymentStatus{
		ObservedGeneration: dep.Generation, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		},
	}
	if err := k8s.Status().Update(ctx, dep); err != nil {
		t.Fatalf("mark %s ready: %v", dep.Name, err)
	}
	labels := map[string]string{discoveryv1.LabelServiceName: names.PrivateService(rev), discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io",
		networkingv1alpha1.ServerlessServiceLabelKey: rev, networkingv1alpha1.ServiceTypeLabelKey: networkingv1alpha1.ServiceTypePrivate}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, GenerateName: names.PrivateService(rev) + "-", Labels: labels},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port)}},
	}
	if err := k8s.Create(ctx, slice); err != nil {
		t.Fatalf("publish endpoints of %s: %v", rev, err)
	}
}

// failReplicas plays a runtime whose app keeps crashing.
func failReplicas(t *testing.T, ns, rev, reason, message string) {
	t.Helper()
	dep := &appsv1.Deployment{}
	eventually(t, "Deployment of "+rev, func(ctx context.Context) (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.Deployment(rev)}, dep)
		return err == nil, fmt.Sprint(err)
	})
	dep.Status = appsv1.DeploymentStatus{
		ObservedGeneration: dep.Generation, Replicas: 1, UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: reason, Message: message},
		},
	}
	if err := k8s.Status().Update(context.Background(), dep); err != nil {
		t.Fatalf("mark %s failing: %v", dep.Name, err)
	}
}

// readyCondition reads an object's Ready condition for failure messages.
func readyCondition(s *duckv1.Status) (bool, string) {
	c := s.GetCondition(duckv1.ConditionReady)
	if c == nil {
		return false, "no Ready condition"
	}
	return c.IsTrue(), fmt.Sprintf("Ready=%s reason=%s message=%q", c.Status, c.Reason, c.Message)
}

// updateService changes a Service as a user would, reading it again when
// a controller's status write got in first (409 Conflict).
func updateService(t *testing.T, ns, name string, change func(*servingv1.Service)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		svc, err := getService(context.Background(), ns, name)
		if err != nil {
			return err
		}
		change(svc)
		return k8s.Update(context.Background(), svc)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func getService(ctx context.Context, ns, name string) (*servingv1.Service, error) {
	svc := &servingv1.Service{}
	return svc, k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, svc)
}
