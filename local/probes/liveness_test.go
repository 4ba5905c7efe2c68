package probes

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestFailureStreak(t *testing.T) {
	fail := errors.New("connection refused")
	for _, tc := range []struct {
		name      string
		threshold int32
		runs      []error
		want      []bool
	}{
		{"fails at the threshold", 3, []error{fail, fail, fail}, []bool{false, false, true}},
		{"a success starts over", 3, []error{fail, fail, nil, fail, fail, fail}, []bool{false, false, false, false, false, true}},
		{"threshold 1 fails at once", 1, []error{nil, fail}, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := failureStreak{threshold: tc.threshold}
			for i, err := range tc.runs {
				if got := s.observe(err); got != tc.want[i] {
					t.Errorf("run %d (%v): failed = %t, want %t", i, err, got, tc.want[i])
				}
			}
		})
	}
}

// TestRunLiveness follows TestLivenessWithFail's app: a liveness probe
// that passes keeps being run; once the app answers 500, failureThreshold
// failures in a row end it with the kubelet's message.
func TestRunLiveness(t *testing.T) {
	var healthy atomic.Bool
	var checks atomic.Int32
	healthy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			http.Error(w, "not healthy", http.StatusInternalServerError)
			return
		}
		if checks.Add(1) == 3 {
			healthy.Store(false) // POST /start-failing
		}
	}))
	defer srv.Close()
	c := &corev1.Container{Name: "user-container", Ports: []corev1.ContainerPort{{ContainerPort: 8012}}}
	probe := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz/liveness", Port: intstr.FromInt32(8012)}},
		PeriodSeconds: 1, FailureThreshold: 2,
	}
	failed := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go New(probe, target(c, serverPorts(t, srv.Listener.Addr().String()), nil)).Liveness(ctx, func(msg string) { failed <- msg })

	select {
	case msg := <-failed:
		if want := "Liveness probe failed: HTTP probe failed with statuscode: 500: not healthy"; msg != want {
			t.Errorf("failure = %q, want %q", msg, want)
		}
		if n := checks.Load(); n != 3 {
			t.Errorf("%d passing checks before the failure, want 3", n)
		}
	case <-time.After(time.Minute): // a hang guard, not a measurement
		t.Fatal("the liveness probe never failed")
	}
}
