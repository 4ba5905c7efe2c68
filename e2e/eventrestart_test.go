//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/eventstore"
)

// A sync failure announced while its EventSink is down outlives a restart
// of knit dev: the event waits in knit-system, the restarted knit dev
// delivers it once the sink is back, and the failing commit it finds
// again at its first pass is not announced a second time.
func TestUndeliveredEventSurvivesKnitDevRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	d := startKnitDev(t, state)
	c := d.client(t)

	// The sink's address is reserved, nothing listens there yet.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	sink := &eventSink{}
	allowEgress(t, c, addr)
	es := &knitv1alpha1.EventSink{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "down"},
		Spec: knitv1alpha1.EventSinkSpec{URI: "http://" + addr + "/"}}
	if err := c.Create(context.Background(), es); err != nil {
		t.Fatal(err)
	}

	app := newGitWorkTree(t, filepath.Join(repoRoot, "examples", "gitops-hello"), "Hello")
	app.write("service.yaml", app.read("service.yaml")+"oops: [unclosed\n")
	broken := app.commitAll("Break the YAML")
	app.git("remote", "add", "knit", d.gitURL(t, "broken"))
	app.git("push", "--quiet", "knit", "main")
	saved := client.ObjectKey{Namespace: "knit-system", Name: eventstore.Name("default/down")}
	waitFor(t, "sync.failed saved for the sink that is down", 2*time.Minute, func(ctx context.Context) (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, saved, cm); err != nil {
			return false, err.Error()
		}
		st := cm.Data[eventstore.StateKey]
		return len(st) > 0 && containsAll(st, typeSyncFailed, broken), st
	})

	if err := d.stop(t); err != nil {
		t.Fatalf("stop knit dev: %v", err)
	}
	d = startKnitDev(t, state)
	c = d.client(t)
	srv := httptest.NewUnstartedServer(sink)
	srv.Listener.Close()
	waitFor(t, "the sink listening on "+addr, 30*time.Second, func(context.Context) (bool, string) {
		srv.Listener, err = net.Listen("tcp", addr)
		return err == nil, fmt.Sprint(err)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	sink.srv = srv

	waitEvent := func(e knitEvent) bool { return e.Type == typeSyncFailed && e.Data.Commit == broken }
	waitFor(t, "sync.failed delivered after the restart", 2*time.Minute, func(context.Context) (bool, string) {
		got := sink.events(waitEvent)
		return len(got) == 1, fmt.Sprint(got)
	})
	waitFor(t, "the EventSink counting it", time.Minute, func(ctx context.Context) (bool, string) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(es), es); err != nil {
			return false, err.Error()
		}
		return es.Status.Delivered == 1, fmt.Sprintf("delivered %d dropped %d", es.Status.Delivered, es.Status.Dropped)
	})
	sink.mu.Lock()
	received := len(sink.received)
	sink.mu.Unlock()
	if received != 1 {
		t.Errorf("the sink received %d requests, want the one sync.failed once: %v", received, sink.events(nil))
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
