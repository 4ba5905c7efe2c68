//go:build !unit

package runtime

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/podlogs"
)

// TestContainerLogOfARestartingContainer: kubectl logs reads the current
// run of a container, --previous the run before, each line stamped with
// its time; a pod or container the runtime does not run is the kubelet's
// 404.
func TestContainerLogOfARestartingContainer(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "counting", 1, corev1.Container{
		Name: "user-container", Image: suiteImage(t),
		Command: []string{"/bin/sh", "-c", "echo run; echo to stderr >&2; exit 1"},
	})
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	var pod string
	eventually(t, 30*time.Second, "a second run", func() (bool, string) {
		views := replicaViews(key)
		if len(views) != 1 {
			return false, fmt.Sprintf("%d replicas", len(views))
		}
		pod = views[0].PodName
		_, err := suite.rt.ContainerLog(ns, pod, "user-container", true)
		return err == nil, fmt.Sprint(err)
	})

	prev, err := suite.rt.ContainerLog(ns, pod, "user-container", true)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := suite.rt.ContainerLog(ns, pod, "user-container", false)
	if err != nil {
		t.Fatal(err)
	}
	if prev.Path != cur.Path || prev.To != cur.From || prev.From >= prev.To || cur.To >= 0 || cur.Live == nil {
		t.Errorf("previous %+v, current %+v: want two runs of one file, the previous one ending where the current begins", prev, cur)
	}
	b, err := os.ReadFile(prev.Path)
	if err != nil {
		t.Fatal(err)
	}
	run := string(b[prev.From:prev.To])
	line := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z `
	if want := regexp.MustCompile(`^(` + line + `(run|to stderr)\n){2}$`); !want.MatchString(run) {
		t.Errorf("previous run's log = %q, want its two lines, stamped", run)
	}

	for _, tc := range []struct {
		pod, container string
		want           int
	}{
		{"nope", "user-container", http.StatusNotFound},
		{pod, "sidecar", http.StatusNotFound},
	} {
		_, err := suite.rt.ContainerLog(ns, tc.pod, tc.container, false)
		var e *podlogs.Error
		if !errors.As(err, &e) || e.Code != tc.want {
			t.Errorf("ContainerLog(%s, %s) = %v, want a %d", tc.pod, tc.container, err, tc.want)
		}
	}
}
