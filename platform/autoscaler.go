package platform

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/podautoscaler"
	"github.com/knitops/knit/dataplane/autoscaler"
	"github.com/knitops/knit/dataplane/kpa"
)

// SetupAutoscaler registers the live KPA and the PodAutoscaler reconciler
// it drives. Both need the leader: one autoscaler decides each revision's
// scale, so replicas never fight over a Deployment's count. knit dev runs
// it in process; on a cluster `knit autoscaler run` does, and serves the
// returned KPA's ActivatorReceiver to the activators. hinter, when not
// nil, hears of each scale-up before its write (knit dev's runtime).
func SetupAutoscaler(mgr ctrl.Manager, store *config.Store, hinter podautoscaler.ScaleHinter) (*kpa.KPA, error) {
	scaler := kpa.New(func() *autoscaler.Config { return store.Load().Autoscaler }, mgr.GetClient())
	err := run([]step{
		{"autoscaler", func() error { return scaler.SetupWithManager(mgr) }},
		{"podautoscaler", func() error { return podautoscaler.SetupWithManager(mgr, scaler, scaler.Wakes(), hinter) }},
	})
	if err != nil {
		return nil, err
	}
	return scaler, nil
}
