package activator

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// series flattens a registry's samples to "name{label=value,...} value".
func series(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			sort.Strings(labels)
			key := f.GetName() + "{" + strings.Join(labels, ",") + "}"
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	q := newFakeQueue(t, true, reply("ok"))
	a, url := startActivator(t, Options{Registry: reg, MaxWait: 10 * time.Millisecond})
	a.SetEndpoints(rev, 1, []string{q.addr()})
	eventually(t, "the replica to be ready", readyIs(t, a, 1))
	c := newClient(t)
	for range 2 {
		if res := send(context.Background(), c, http.MethodGet, url, rev, ""); res.status != http.StatusOK {
			t.Fatal(res)
		}
	}
	other := rev
	other.Name = "cold"
	a.SetEndpoints(other, 1, nil)
	if res := send(context.Background(), c, http.MethodGet, url, other, ""); res.status != http.StatusServiceUnavailable {
		t.Fatal(res)
	}

	got := series(t, reg)
	want := map[string]float64{}
	for _, r := range []string{"hello", "cold"} {
		for _, class := range []string{"1xx", "2xx", "3xx", "4xx", "5xx"} {
			want["knit_activator_requests_total{namespace_name=default,response_code_class="+class+",revision_name="+r+"}"] = 0
		}
	}
	want["knit_activator_requests_total{namespace_name=default,response_code_class=2xx,revision_name=hello}"] = 2
	want["knit_activator_requests_total{namespace_name=default,response_code_class=5xx,revision_name=cold}"] = 1
	want["knit_activator_request_duration_seconds{namespace_name=default,revision_name=hello}_count"] = 2
	want["knit_activator_request_duration_seconds{namespace_name=default,revision_name=cold}_count"] = 1
	want["knit_activator_waiting_requests{namespace_name=default,revision_name=hello}"] = 0
	want["knit_activator_waiting_requests{namespace_name=default,revision_name=cold}"] = 0
	want["knit_activator_ready_endpoints{namespace_name=default,revision_name=hello}"] = 1
	want["knit_activator_ready_endpoints{namespace_name=default,revision_name=cold}"] = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("metrics (-want +got):\n%s", diff)
	}

	a.Forget(other)
	for key := range series(t, reg) {
		if strings.Contains(key, "revision_name=cold") {
			t.Errorf("forgotten revision still has %s", key)
		}
	}
}

// Two activators in one process register on their own registries.
func TestMetricsOnTheirOwnRegistry(t *testing.T) {
	for range 2 {
		if _, err := New(Options{Registry: prometheus.NewRegistry()}); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	if _, err := New(Options{Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Registry: reg}); err == nil {
		t.Fatal("a second activator on the same registry registered its metrics twice")
	}
}
