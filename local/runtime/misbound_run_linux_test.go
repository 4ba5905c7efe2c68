//go:build !unit

package runtime

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMisboundAppNamesItsPort runs a revision's pod as Knative makes it,
// in the shared network: an app told PORT that listens elsewhere (a port
// of its own, LISTEN_PORT, as an app hard-coding :8080 does), and a
// queue-proxy whose readiness probe is of the user port. The Deployment's
// failure names the port the app listens on, not the queue-proxy's probe.
func TestMisboundAppNamesItsPort(t *testing.T) {
	startSuite(t)
	if suite.rt.netPool != nil {
		t.Fatal("the suite runs replicas in networks of their own; this test is of the shared network")
	}
	t.Parallel()
	ns := newNamespace(t)
	fixed, err := freeLoopbackPort()
	if err != nil {
		t.Fatal(err)
	}
	app := corev1.Container{
		Name: "user-container", Image: suiteImage(t), Command: []string{"/app/httpserver"},
		Ports: []corev1.ContainerPort{{Name: "user-port", ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "LISTEN_PORT", Value: strconv.Itoa(int(fixed))}},
	}
	queue := corev1.Container{
		Name: "queue-proxy", Image: suiteImage(t), Command: []string{"/app/httpserver"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8012}},
		Env:   []corev1.EnvVar{{Name: "PORT", Value: "8012"}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 1, FailureThreshold: 1,
		},
	}
	d := revisionDeployment(ns, "misbound", 1, app, queue)
	create(t, d)

	want := regexp.MustCompile(fmt.Sprintf(`^container user-container listens on :%d, not on its PORT \d+ `+
		`\(containerPort 8080 in knit dev's shared network\): listen on \$PORT$`, fixed))
	waitForDeployment(t, client.ObjectKeyFromObject(d), 60*time.Second, "a ReplicaFailure naming port "+strconv.Itoa(int(fixed)), func(d *appsv1.Deployment) bool {
		c := condition(d, appsv1.DeploymentReplicaFailure)
		return c != nil && c.Status == corev1.ConditionTrue && c.Reason == ReasonReadinessProbeFailed && want.MatchString(c.Message)
	})
}
