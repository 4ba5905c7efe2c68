package queue

import (
	"os/exec"
	"strings"
	"testing"
)

// The queue-proxy runs beside every replica and starts on every cold
// start's path, so it stays small: none of Kubernetes' client libraries,
// knit's control plane or Prometheus' client in its imports, nor in the
// knit-queue binary's.
func TestNoHeavyDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "./queuecmd", "github.com/knitops/knit/cmd/knit-queue").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	// client_golang and the protobuf runtime were a third of the binary,
	// of its memory and of its start: the queue writes /metrics itself.
	forbidden := []string{"k8s.io/", "sigs.k8s.io/", "github.com/knitops/knit/controllers", "github.com/knitops/knit/gitsync", "google.golang.org/grpc",
		"github.com/prometheus/", "google.golang.org/protobuf"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("the queue-proxy imports %s", pkg)
			}
		}
	}
}
