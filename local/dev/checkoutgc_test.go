package dev

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/knitops/knit/api"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/plan"
)

func revision(ns, name, repo, sha string) servingv1.Revision {
	r := servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if repo != "" {
		r.Labels = map[string]string{plan.RepositoryLabel: repo}
	}
	if sha != "" {
		r.Annotations = map[string]string{plan.CommitAnnotation: sha}
	}
	return r
}

func TestLiveCheckouts(t *testing.T) {
	got := liveCheckouts([]servingv1.Revision{
		revision("default", "hello-aaaa", "hello", "aaaa"),
		revision("default", "hello-bbbb", "hello", "bbbb"),
		revision("team", "hello-cccc", "hello", "cccc"),
		revision("default", "by-hand", "", ""),        // not from Git
		revision("default", "no-commit", "hello", ""), // not stamped
	})
	want := map[string]map[string]bool{
		"default/hello": {"aaaa": true, "bbbb": true},
		"team/hello":    {"cccc": true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("liveCheckouts (-want +got):\n%s", diff)
	}
}

// The collector keeps what a Revision needs and drops the rest, a
// repository nothing is deployed from any more included. The client is a
// fake: the logic under test is which directories go.
func TestCheckoutGCPrunes(t *testing.T) {
	src := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for _, d := range []string{"default/hello/aaaa", "default/hello/bbbb", "default/gone/cccc"} {
		dir := filepath.Join(src, d)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(dir, old, old); err != nil {
			t.Fatal(err)
		}
	}
	scheme, err := api.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	live := revision("default", "hello-aaaa", "hello", "aaaa")
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&live).Build()
	gc := &checkoutGC{reader: reader, srcRoot: src, log: logr.Discard()}
	if err := gc.prune(t.Context(), time.Now()); err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]bool{"default/hello/aaaa": true, "default/hello/bbbb": false, "default/gone": false} {
		_, err := os.Stat(filepath.Join(src, d))
		if got := err == nil; got != want {
			t.Errorf("%s exists = %v, want %v", d, got, want)
		}
	}
}
