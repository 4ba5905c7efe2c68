package gitrepository

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/hub"
	gitsource "github.com/knitops/knit/gitsync/source"
)

func TestFetchReason(t *testing.T) {
	fetchedAt := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	last := remembered{
		fetched:    gitsource.Fetched{Heads: map[string]string{"main": "aaa", "feature": "bbb"}},
		fetchedAt:  fetchedAt,
		asked:      map[string]string{"main": "", "feature": "bbb"},
		generation: 2, requestedAt: "t1",
	}
	repo := func(change func(*knitv1alpha1.GitRepository)) *knitv1alpha1.GitRepository {
		r := &knitv1alpha1.GitRepository{ObjectMeta: metav1.ObjectMeta{Generation: 2, Annotations: map[string]string{hub.RequestedAtAnnotation: "t1"}},
			Spec: knitv1alpha1.GitRepositorySpec{Interval: metav1.Duration{Duration: time.Minute}}}
		if change != nil {
			change(r)
		}
		return r
	}
	tests := []struct {
		name  string
		st    func(*remembered)
		repo  *knitv1alpha1.GitRepository
		asked map[string]string
		after time.Duration
		want  string
	}{
		{name: "nothing new", repo: repo(nil), asked: last.asked, after: 59 * time.Second},
		{name: "a pull request's commit already fetched", repo: repo(nil), asked: map[string]string{"main": "", "feature": "bbb"}},
		{name: "a pull request closed", repo: repo(nil), asked: map[string]string{"main": ""}},
		{name: "never fetched", st: func(st *remembered) { *st = remembered{} }, repo: repo(nil), asked: last.asked, want: "first pass"},
		{name: "triggered", st: func(st *remembered) { st.refetch = true }, repo: repo(nil), asked: last.asked, want: "triggered, or the last fetch failed"},
		{name: "spec", repo: repo(func(r *knitv1alpha1.GitRepository) { r.Generation = 3 }), asked: last.asked, want: "spec changed"},
		{name: "requested", repo: repo(func(r *knitv1alpha1.GitRepository) { r.Annotations[hub.RequestedAtAnnotation] = "t2" }), asked: last.asked, want: "sync requested"},
		{name: "interval", repo: repo(nil), asked: last.asked, after: time.Minute, want: "interval"},
		{name: "default interval", repo: repo(func(r *knitv1alpha1.GitRepository) { r.Spec.Interval.Duration = 0 }), asked: last.asked, after: defaultInterval, want: "interval"},
		{name: "a pull request on a new branch", repo: repo(nil), asked: map[string]string{"main": "", "feature": "bbb", "fix": ""}, want: "pull request on branch fix"},
		{name: "a pull request names a new head", repo: repo(nil), asked: map[string]string{"main": "", "feature": "ccc"}, want: "pull request names a new head of feature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := last
			if tt.st != nil {
				tt.st(&st)
			}
			if got := st.fetchReason(tt.repo, tt.asked, fetchedAt.Add(tt.after)); got != tt.want {
				t.Errorf("fetchReason = %q, want %q", got, tt.want)
			}
		})
	}
}

// A pull request naming a head the remote does not have (yet) asks for
// one fetch, not one per pass.
func TestFetchReasonAsksOncePerNamedHead(t *testing.T) {
	repo := &knitv1alpha1.GitRepository{}
	asked := map[string]string{"main": "", "feature": "ccc"}
	st := remembered{fetchedAt: time.Now(), fetched: gitsource.Fetched{Heads: map[string]string{"main": "aaa", "feature": "bbb"}},
		asked: map[string]string{"main": "", "feature": "bbb"}}
	if got := st.fetchReason(repo, asked, st.fetchedAt); got == "" {
		t.Fatal("a new head named: no fetch")
	}
	st.remember(repo, st.fetched, asked, st.fetchedAt)
	if got := st.fetchReason(repo, asked, st.fetchedAt); got != "" {
		t.Errorf("after fetching for it, fetchReason = %q, want none", got)
	}
}
