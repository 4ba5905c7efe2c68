package revision

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/conflict"
)

// Reconciler runs Revisions through a Deployment and a PodAutoscaler.
type Reconciler struct {
	client     client.Client
	config     *config.Store
	queueImage string
	queueEnv   []corev1.EnvVar
	// events records the Revision turning Ready or failing (readyEvents).
	events events.EventRecorder
	// pods reads the Revisions' pods (indexed by podRevisionIndex) for
	// status.containerStatuses and the failures their kubelet reports;
	// nil reads none.
	pods client.Reader
}

// SetupWithManager registers the reconciler. queueImage is how replicas
// run the queue-proxy ("knit://queue" under the local runtime) and
// queueEnv what the runtime needs added to its environment. Pods are
// watched through a cache of Revisions' pods alone (newPodCache), for
// the image digests and the failures they report.
func SetupWithManager(mgr ctrl.Manager, cfg *config.Store, queueImage string, queueEnv ...corev1.EnvVar) error {
	pods, err := newPodCache(mgr)
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&servingv1.Revision{}).
		Owns(&appsv1.Deployment{}).
		Owns(&autoscalingv1alpha1.PodAutoscaler{}).
		WatchesRawSource(watchPods(pods)).
		Complete(conflict.Requeue(&Reconciler{client: mgr.GetClient(), config: cfg, queueImage: queueImage, queueEnv: queueEnv,
			events: mgr.GetEventRecorder("knit-revision"), pods: pods}))
}
