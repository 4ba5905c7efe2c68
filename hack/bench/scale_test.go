package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestFleetManifestsAreServicesOfTheirOwn(t *testing.T) {
	f := fleet{namespace: "scale", prefix: "s", count: 3, initialScale: 0, image: scaleImage}
	docs := strings.Split(f.manifests("v2"), "---\n")
	if len(docs) != 3 {
		t.Fatalf("%d documents, want 3", len(docs))
	}
	for i, doc := range docs {
		var svc servingv1.Service
		if err := yaml.UnmarshalStrict([]byte(doc), &svc); err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, doc)
		}
		want := f.name(i + 1)
		got := []string{svc.Kind, svc.Namespace, svc.Name,
			svc.Spec.Template.Annotations["autoscaling.knative.dev/min-scale"],
			svc.Spec.Template.Annotations["autoscaling.knative.dev/initial-scale"],
			svc.Spec.Template.Spec.Containers[0].Image, svc.Spec.Template.Spec.Containers[0].Env[0].Value}
		if diff := cmp.Diff([]string{"Service", "scale", want, "0", "0", scaleImage, "v2 " + want}, got); diff != "" {
			t.Errorf("document %d (-want +got):\n%s", i, diff)
		}
	}
	if f.name(12) != "s-0012" {
		t.Errorf("name(12) = %q", f.name(12))
	}
	if strings.Contains((fleet{prefix: "r", count: 1}).manifests("x"), "namespace:") {
		t.Error("a fleet without a namespace names one")
	}
}

const metricsPage = `# TYPE controller_runtime_reconcile_total counter
controller_runtime_reconcile_total{controller="service",result="success"} 990
controller_runtime_reconcile_total{controller="service",result="error"} 5
controller_runtime_reconcile_total{controller="service",result="requeue"} 5
controller_runtime_reconcile_total{controller="route",result="success"} 40
# TYPE workqueue_depth gauge
workqueue_depth{controller="service",name="service"} 0
workqueue_depth{controller="route",name="route"} 3
# TYPE controller_runtime_active_workers gauge
controller_runtime_active_workers{controller="service"} 0
controller_runtime_active_workers{controller="route"} 1
`

func TestResyncedNeedsEveryObjectReconciledAndNothingBusy(t *testing.T) {
	work, err := parseControllerWork(strings.NewReader(metricsPage))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]controllerWork{
		"service": {reconciles: 1000},
		"route":   {reconciles: 40, queued: 3, active: 1},
	}, work, cmp.AllowUnexported(controllerWork{})); diff != "" {
		t.Fatalf("parsed (-want +got):\n%s", diff)
	}
	idleRoute := map[string]controllerWork{"service": work["service"], "route": {reconciles: 40}}
	for _, tc := range []struct {
		name    string
		work    map[string]controllerWork
		want    map[string]int
		done    bool
		pending string
	}{
		{"all reconciled, idle", idleRoute, map[string]int{"service": 1000, "route": 40}, true, ""},
		{"nothing asked, idle", idleRoute, nil, true, ""},
		{"one short", idleRoute, map[string]int{"service": 1001}, false, "service 1000/1001"},
		{"a controller never seen", idleRoute, map[string]int{"revision": 1}, false, "revision 0/1"},
		{"busy", work, map[string]int{"service": 1000}, false, "route busy (3 queued, 1 working)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, pending := resynced(tc.work, tc.want)
			if done != tc.done || pending != tc.pending {
				t.Errorf("resynced = %v, %q; want %v, %q", done, pending, tc.done, tc.pending)
			}
		})
	}
}

func TestSpliceSectionReplacesOnlyItsOwn(t *testing.T) {
	section := "\n" + scaleHeading + "\nnew\n"
	for _, tc := range []struct{ name, old, want string }{
		{"replaced in the middle",
			"# B\n\n## Cold start\n\nc\n\n" + scaleHeading + "\nold\n\n## Targets\n\nt\n",
			"# B\n\n## Cold start\n\nc\n" + section + "\n## Targets\n\nt\n"},
		{"replaced at the end", "# B\n\n" + scaleHeading + "\nold\n", "# B\n" + section},
		{"inserted before the targets", "# B\n\n## Cold start\n\nc\n\n## Targets\n\nt\n",
			"# B\n\n## Cold start\n\nc\n" + section + "\n## Targets\n\nt\n"},
		{"appended", "# B\n\nc\n", "# B\n\nc\n" + section},
		{"a new page", "", "\n" + section},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := spliceSection(tc.old, section)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.old != "" && !strings.Contains(got, "\n"+scaleHeading) {
				t.Fatal("no scale section")
			}
			if carried := carriedScale(got); carried != section {
				t.Errorf("carriedScale = %q, want %q", carried, section)
			}
		})
	}
}
