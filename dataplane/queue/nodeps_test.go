package queue

import (
	"os/exec"
	"strings"
	"testing"
)

// The queue-proxy runs beside every replica, so it stays small: none of
// Kubernetes' client libraries or knit's control plane in its imports.
func TestNoHeavyDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{"k8s.io/", "sigs.k8s.io/", "github.com/knitops/knit/controllers", "github.com/knitops/knit/gitsync", "google.golang.org/grpc"}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("dataplane/queue imports %s", pkg)
			}
		}
	}
}
