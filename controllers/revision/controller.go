package revision

import (
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	autoscalingv1alpha1 "github.com/knitops/knit/api/autoscaling/v1alpha1"
	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/conflict"
	"github.com/knitops/knit/controllers/revision/resolve"
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
	// resolver pins the tags of a new Revision's images to digests before
	// its Deployment is made; nil runs them as written.
	resolver *resolve.Resolver
}

// Options are what differs between knit dev and a cluster in how the
// Revision reconciler runs replicas.
type Options struct {
	// QueueImage is how replicas run the queue-proxy ("knit://queue"
	// under the local runtime), QueueEnv what is added to its environment.
	QueueImage string
	QueueEnv   []corev1.EnvVar
	// RegistryTransport carries the requests that resolve tags to digests
	// (knit dev's allows plain HTTP only where its image store does); nil:
	// http.DefaultTransport.
	RegistryTransport http.RoundTripper
}

// SetupWithManager registers the reconciler. Pods are watched through a
// cache of Revisions' pods alone (newPodCache), for the image digests and
// the failures they report; the resolver's answers wake their Revision.
func SetupWithManager(mgr ctrl.Manager, cfg *config.Store, opts Options) error {
	pods, err := newPodCache(mgr)
	if err != nil {
		return err
	}
	resolved := make(chan event.GenericEvent, 64)
	resolver := resolve.New(mgr.GetAPIReader(), opts.RegistryTransport, func(key types.NamespacedName) {
		// Never blocks the resolver: a full channel means the reconciler
		// is busy, and the wake waits in a goroutine of its own.
		ev := event.GenericEvent{Object: &servingv1.Revision{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}}
		select {
		case resolved <- ev:
		default:
			go func() { resolved <- ev }()
		}
	})
	return ctrl.NewControllerManagedBy(mgr).
		For(&servingv1.Revision{}).
		Owns(&appsv1.Deployment{}).
		Owns(&autoscalingv1alpha1.PodAutoscaler{}).
		WatchesRawSource(watchPods(pods)).
		WatchesRawSource(source.Channel(resolved, &handler.EnqueueRequestForObject{})).
		Complete(conflict.Requeue(&Reconciler{client: mgr.GetClient(), config: cfg, queueImage: opts.QueueImage, queueEnv: opts.QueueEnv,
			events: mgr.GetEventRecorder("knit-revision"), pods: pods, resolver: resolver}))
}
