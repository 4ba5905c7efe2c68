package announce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/gitsync/events"
	"github.com/knitops/knit/gitsync/plan"
)

// routeReconciler announces Git-deployed Routes whose traffic or URL
// changed.
type routeReconciler struct{ a *Announcer }

func (r *routeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rt := &servingv1.Route{}
	if err := r.a.client.Get(ctx, req.NamespacedName, rt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if rt.Labels[plan.RepositoryLabel] == "" || rt.Status.URL == "" || len(rt.Status.Traffic) == 0 {
		return ctrl.Result{}, nil
	}
	b, err := json.Marshal(struct {
		URL     string
		Traffic []servingv1.TrafficTarget
	}{rt.Status.URL, rt.Status.Traffic})
	if err != nil {
		return ctrl.Result{}, err
	}
	sum := sha256.Sum256(b)
	state := hex.EncodeToString(sum[:8])
	if !r.a.once(string(rt.UID), state) {
		return ctrl.Result{}, nil
	}
	r.a.send(ctx, rt.Namespace, rt.Labels[plan.PullRequestLabel], events.Occurrence{
		Type:     events.TypeRouteUpdated,
		Resource: events.Resource{Kind: "Route", Namespace: rt.Namespace, Name: rt.Name},
		Key:      fmt.Sprintf("%s %d %s", rt.UID, rt.Generation, state),
		Data: events.Data{
			Repo: rt.Labels[plan.RepositoryLabel], Branch: rt.Labels[plan.BranchLabel],
			Commit: rt.Annotations[plan.CommitAnnotation], Revision: latestRevision(rt), URL: rt.Status.URL,
		},
	})
	return ctrl.Result{}, nil
}

// latestRevision is the Revision taking the largest share of the Route.
func latestRevision(rt *servingv1.Route) string {
	best, bestPct := "", int64(-1)
	for _, t := range rt.Status.Traffic {
		if t.Percent != nil && *t.Percent > bestPct {
			best, bestPct = t.RevisionName, *t.Percent
		}
	}
	return best
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
