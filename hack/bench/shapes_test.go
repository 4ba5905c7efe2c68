package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/knitops/knit/dataplane/queue/queuebench"
	"github.com/knitops/knit/dataplane/queue/queuebench/bare"
)

// checkShapes sends one request of each shape down each path: a server
// without h2c comes back n/a for h2c with the error, and nothing else;
// the default-transport ReverseProxy is not even tried with h2c.
func TestCheckShapes(t *testing.T) {
	both := httptest.NewUnstartedServer(queuebench.App())
	both.Config.Protocols = bare.Protocols()
	both.Start()
	defer both.Close()
	h1 := httptest.NewServer(queuebench.App())
	defer h1.Close()

	list := []path{
		{name: queuebench.Direct, label: "direct", url: both.URL},
		{name: "h1-only", label: "h1 only", url: h1.URL},
		{name: queuebench.ReverseProxy, label: "default transport", url: h1.URL},
	}
	na, err := checkShapes(context.Background(), list, queuebench.Shapes())
	if err != nil {
		t.Fatal(err)
	}
	if len(na) != 1 || len(na["h1-only"]) != 1 || !strings.Contains(na["h1-only"][queuebench.ShapeH2C], "failed the check") {
		t.Errorf("checkShapes n/a = %v, want h2c on h1-only alone", na)
	}
	if carries(list[1], queuebench.ShapeH2C, na) || !carries(list[1], queuebench.ShapePost, na) || !carries(list[0], queuebench.ShapeH2C, na) {
		t.Error("carries does not follow checkShapes' findings")
	}
}
