//go:build !unit

package servingtest

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// On a cluster the kubelet says why a Revision's pod does not run; the
// Revision fails with its words, and the Configuration, the Route and
// the Service turn Ready=False with a reason and a message, as Knative's
// TestContainerErrorMsg and TestContainerExitingMsg check. Here a pod of
// the Revision plays the kubelet's report. Once the replicas run, the
// Service is Ready.
func TestPodFailureShowsOnParents(t *testing.T) {
	for _, tc := range []struct {
		name, reason, message string
		status                corev1.ContainerStatus
		port                  int32
	}{{
		name: "image", reason: "ErrImagePull", message: `failed to pull image "example.com/invalidhelloworld": not found`, port: 41901,
		status: corev1.ContainerStatus{Name: "user-container", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "ErrImagePull", Message: `failed to pull image "example.com/invalidhelloworld": not found`}}},
	}, {
		name: "exiting", reason: "ExitCode5", message: "Container failed with: Crashed...", port: 41902,
		status: corev1.ContainerStatus{Name: "user-container", RestartCount: 2,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 20s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 5, Reason: "Error", Message: "Crashed..."}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t)
			ctx := context.Background()
			if err := k8s.Create(ctx, helloService(ns, "hello", "World")); err != nil {
				t.Fatal(err)
			}
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-00001-deployment-abc", Labels: map[string]string{servingv1.RevisionLabelKey: "hello-00001"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "user-container", Image: "example.com/hello"}, {Name: "queue-proxy", Image: "example.com/queue"}}},
			}
			if err := k8s.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{tc.status,
				{Name: "queue-proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
			if err := k8s.Status().Update(ctx, pod); err != nil {
				t.Fatal(err)
			}
			eventually(t, "Revision, Configuration, Route and Service Ready=False", func(ctx context.Context) (bool, string) {
				rev, cfg, rt, svc := &servingv1.Revision{}, &servingv1.Configuration{}, &servingv1.Route{}, &servingv1.Service{}
				for name, obj := range map[string]client.Object{"hello-00001": rev, "hello": cfg} {
					if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
						return false, err.Error()
					}
				}
				for _, obj := range []client.Object{rt, svc} {
					if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello"}, obj); err != nil {
						return false, err.Error()
					}
				}
				if r := rev.Status.GetCondition(duckv1.ConditionReady); !r.IsFalse() || r.Reason != tc.reason || r.Message != tc.message {
					return false, fmt.Sprintf("Revision Ready %+v", r)
				}
				for what, s := range map[string]*duckv1.Status{"Configuration": &cfg.Status.Status, "Route": &rt.Status.Status, "Service": &svc.Status.Status} {
					if r := s.GetCondition(duckv1.ConditionReady); !r.IsFalse() || r.Reason == "" || r.Message == "" {
						return false, fmt.Sprintf("%s Ready %+v", what, r)
					}
				}
				routes, cfgs := svc.Status.GetCondition(servingv1.ServiceConditionRoutesReady), svc.Status.GetCondition(servingv1.ServiceConditionConfigurationsReady)
				return routes.IsFalse() && cfgs.IsFalse() && svc.Status.ObservedGeneration == svc.Generation,
					fmt.Sprintf("Service RoutesReady %+v ConfigurationsReady %+v", routes, cfgs)
			})

			pod.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: "user-container", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "queue-proxy", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
			if err := k8s.Status().Update(ctx, pod); err != nil {
				t.Fatal(err)
			}
			runReplicas(t, ns, "hello-00001", tc.port)
			eventually(t, "Service Ready once the replicas run", func(ctx context.Context) (bool, string) {
				svc, err := getService(ctx, ns, "hello")
				if err != nil {
					return false, err.Error()
				}
				return readyCondition(&svc.Status.Status)
			})
		})
	}
}
