package events

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/knitops/knit/gitsync/egress"
)

// A sink on loopback (as etcd's or knit's own webhook port would be) gets
// no request under the default egress policy: the connection is refused
// on the address it resolved to, the event dropped at once rather than
// retried, and the refusal kept for the EventSink's condition. An
// operator's allow rule, read anew for each connection, lets it through.
func TestEgressPolicyRefusesSinks(t *testing.T) {
	sink := &testSink{}
	url := serve(t, sink) // http://127.0.0.1:<port>
	policy := &egress.Policy{}
	d, _ := newTestDispatcher(t, func(o *Options) { o.Egress = func() *egress.Policy { return policy } })
	if err := d.SetSinks(Sink{Name: "default/internal", URL: url}); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckSink(context.Background(), Sink{URL: url}); err == nil {
		t.Error("CheckSink passed a loopback sink under the default policy")
	}
	if err := d.Send(testEvent(t, TypeRevisionReady, 1)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the refusal", func() bool { return stats(d, "default/internal").Dropped == 1 })
	s := stats(d, "default/internal")
	if s.FailedAttempts != 1 || !strings.Contains(s.Denied, "127.0.0.1 is a loopback address") {
		t.Errorf("stats = %+v, want one failed attempt, not retried, and the refusal", s)
	}
	if got := testutil.ToFloat64(d.metrics.dropped.WithLabelValues("default/internal", dropDenied)); got != 1 {
		t.Errorf("dropped{denied} = %v, want 1", got)
	}
	if n := len(sink.attemptIDs()); n != 0 {
		t.Errorf("the sink saw %d requests, want none", n)
	}

	allowed, err := egress.ParseRules(strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	policy = &egress.Policy{Allow: allowed}
	if err := d.Send(testEvent(t, TypeRevisionReady, 2)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "delivery once allowed", func() bool { return len(sink.acceptedIDs()) == 1 })
	if err := d.CheckSink(context.Background(), Sink{URL: url}); err != nil {
		t.Errorf("CheckSink once allowed: %v", err)
	}
}
