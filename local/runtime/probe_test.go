package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/probes"
)

// TestExecProbe runs exec probes as the runtime runs them for a process
// of the shared network (package probes tests the other handlers): a
// failure says how the command ended and the first line it wrote.
func TestExecProbe(t *testing.T) {
	c := &corev1.Container{Name: "queue-proxy"}
	for _, tc := range []struct {
		name    string
		command []string
		wantErr string
	}{
		{"exec", []string{"sh", "-c", "exit 0"}, ""},
		{"exec failing", []string{"sh", "-c", "echo not yet; exit 3"}, "exit status 3: not yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newContainerExec(nil, []string{"PATH=/usr/bin:/bin"}, t.TempDir())
			p := probes.New(&corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: tc.command}}}, probes.Target{Container: c, IP: loopback, Exec: e.run})
			err := p.Check(context.Background(), time.Second)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("check = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
