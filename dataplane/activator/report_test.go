package activator

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/knitops/knit/internal/hopauth"
)

// post is one request the fake autoscaler received.
type post struct {
	Path string
	Body string
}

func TestHTTPReporter(t *testing.T) {
	posts := make(chan post, 10)
	var fail atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		var raw json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		posts <- post{r.URL.Path, string(raw)}
		if fail.Load() {
			http.Error(w, "autoscaler: down", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()

	rep, err := NewHTTPReporter(srv.URL+"/base/", "activator-0", hopauth.Generate(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rep.Start(ctx) }()
	defer func() { cancel(); <-done }()

	var _ Reporter = rep
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	a := types.NamespacedName{Namespace: "ns", Name: "a"}

	rep.Poke(b)
	got := receive(t, posts, "the poke")
	if diff := cmp.Diff(post{"/base" + PokePath, `{"activator":"activator-0","revisions":[{"namespace":"ns","name":"b"}]}`}, got); diff != "" {
		t.Fatalf("poke (-want +got):\n%s", diff)
	}

	rep.ActivatorLoad(b, 2, 4)
	rep.ActivatorLoad(a, 0.5, 1)
	rep.ActivatorLoad(b, 3, 5) // the latest figure wins
	rep.Flush()
	got = receive(t, posts, "the stats")
	want := `{"activator":"activator-0","stats":[` +
		`{"namespace":"ns","name":"a","averageConcurrency":0.5,"requestsPerSecond":1},` +
		`{"namespace":"ns","name":"b","averageConcurrency":3,"requestsPerSecond":5}]}`
	if diff := cmp.Diff(post{"/base" + StatsPath, want}, got); diff != "" {
		t.Fatalf("stats (-want +got):\n%s", diff)
	}

	// The receiver decodes them into the exported types.
	var batch StatBatch
	if err := json.Unmarshal([]byte(got.Body), &batch); err != nil {
		t.Fatal(err)
	}
	if k := batch.Stats[1].NamespacedName(); k != b {
		t.Fatalf("decoded key %s, want %s", k, b)
	}

	// A failing autoscaler drops the round; the next one still goes out.
	fail.Store(true)
	rep.Poke(a)
	receive(t, posts, "the failed poke")
	fail.Store(false)
	rep.Poke(a)
	if got := receive(t, posts, "the next poke"); got.Path != "/base"+PokePath {
		t.Fatalf("after a failure: %+v", got)
	}
}

func TestNewHTTPReporterRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "autoscaler:8080", "ftp://autoscaler", "http://"} {
		if _, err := NewHTTPReporter(u, "", hopauth.Generate(), nil); err == nil {
			t.Errorf("NewHTTPReporter(%q) accepted it", u)
		}
	}
}
