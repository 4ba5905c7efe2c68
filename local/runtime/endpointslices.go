package runtime

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/knitops/knit/internal/endpointslices"
)

// EndpointAddressType is the address type of every endpoint the runtime
// publishes. The API server refuses loopback and link-local IPs in IPv4
// and IPv6 slices (ValidateEndpointIP: "may not be in the loopback
// range"), so a replica's 127.0.0.1 (or its 169.254.x.y when isolated) is
// published as an FQDN, which dials the same as host:port. Consumers must
// not filter slices on IPv4.
const EndpointAddressType = discoveryv1.AddressTypeFQDN

// endpointSliceReconciler publishes a Service's EndpointSlices from the
// replicas it selects, as Kubernetes' endpointslice controller would from
// pods. It is the only writer of the runtime's slices.
type endpointSliceReconciler struct{ rt *Runtime }

// Reconcile makes the Service's slices (those this runtime manages) match
// its replicas: one per replica, deleted when the replica or the Service
// is gone. With no kube-controller-manager in knit dev there is no garbage
// collector, so a deleted Service's slices are deleted here.
func (r *endpointSliceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var want []discoveryv1.EndpointSlice
	var svc corev1.Service
	err := r.rt.client.Get(ctx, req.NamespacedName, &svc)
	if client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	if err == nil && svc.DeletionTimestamp == nil {
		want = makeEndpointSlices(&svc, r.rt.replicasIn(req.Namespace))
	}
	if expect := r.rt.opts.ExpectSlices; expect != nil {
		expect(req.NamespacedName, svc.Labels, want)
	}

	have, err := endpointslices.List(ctx, r.rt.client, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	existing := map[string]*discoveryv1.EndpointSlice{}
	for i := range have {
		// Another's slices of the Service (the ServerlessService's of a
		// public one) are theirs to keep.
		if have[i].Labels[discoveryv1.LabelManagedBy] == ManagedBy {
			existing[have[i].Name] = &have[i]
		}
	}
	for i := range want {
		if err := r.apply(ctx, &want[i], existing[want[i].Name]); err != nil {
			return ctrl.Result{}, err
		}
		delete(existing, want[i].Name)
	}
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		log.FromContext(ctx).V(1).Info("Deleting EndpointSlice", "endpointSlice", name)
		if err := r.rt.sliceWriter.Delete(ctx, existing[name]); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// apply creates or updates one slice. A slice the cache has not seen yet
// is read from the API when the create collides.
func (r *endpointSliceReconciler) apply(ctx context.Context, want, have *discoveryv1.EndpointSlice) error {
	if have == nil {
		err := r.rt.sliceWriter.Create(ctx, want, fieldOwner)
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		have = &discoveryv1.EndpointSlice{}
		if err := r.rt.reader.Get(ctx, client.ObjectKeyFromObject(want), have); err != nil {
			return err
		}
	}
	if sameSlice(want, have) {
		return nil
	}
	updated := have.DeepCopy()
	updated.Labels, updated.OwnerReferences = want.Labels, want.OwnerReferences
	updated.AddressType, updated.Endpoints, updated.Ports = want.AddressType, want.Endpoints, want.Ports
	return r.rt.sliceWriter.Update(ctx, updated, fieldOwner)
}

func sameSlice(a, b *discoveryv1.EndpointSlice) bool {
	return equality.Semantic.DeepEqual(a.Labels, b.Labels) &&
		equality.Semantic.DeepEqual(a.OwnerReferences, b.OwnerReferences) &&
		a.AddressType == b.AddressType &&
		equality.Semantic.DeepEqual(a.Endpoints, b.Endpoints) &&
		equality.Semantic.DeepEqual(a.Ports, b.Ports)
}

// makeEndpointSlices is the Service's slices for these replicas: one per
// selected replica that has an address, named <service>-<replica id>,
// with one endpoint at the replica's address (an FQDN, see
// EndpointAddressType) whose ports are the Service's ports with targetPort
// resolved to that replica's port. Conditions follow Kubernetes: ready is
// ready and not terminating, serving is ready, terminating is stopping
// (publishNotReadyAddresses makes every replica ready and serving).
func makeEndpointSlices(svc *corev1.Service, replicas []replicaView) []discoveryv1.EndpointSlice {
	var out []discoveryv1.EndpointSlice
	for _, r := range replicas {
		if !selects(svc, r.Labels) || r.IP == "" {
			continue
		}
		serving := r.Ready || svc.Spec.PublishNotReadyAddresses
		ports := slicePorts(svc, r.Ports)
		out = append(out, discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Name:            svc.Name + "-" + r.ID,
				Namespace:       svc.Namespace,
				Labels:          sliceLabels(svc),
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service"))},
			},
			AddressType: EndpointAddressType,
			Endpoints: []discoveryv1.Endpoint{{
				Addresses: []string{r.IP},
				Conditions: discoveryv1.EndpointConditions{
					Ready:       ptr.To(serving && (!r.Terminating || svc.Spec.PublishNotReadyAddresses)),
					Serving:     ptr.To(serving),
					Terminating: ptr.To(r.Terminating),
				},
			}},
			Ports: ports,
		})
	}
	slices.SortFunc(out, func(a, b discoveryv1.EndpointSlice) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// sliceLabels are the Service's labels plus the two Kubernetes sets on
// every slice, as the endpointslice controller does.
func sliceLabels(svc *corev1.Service) map[string]string {
	l := maps.Clone(svc.Labels)
	if l == nil {
		l = map[string]string{}
	}
	l[discoveryv1.LabelServiceName] = svc.Name
	l[discoveryv1.LabelManagedBy] = ManagedBy
	return l
}

// slicePorts resolves each Service port's targetPort for one replica. A
// named targetPort the replica does not declare leaves the port out, as
// Kubernetes does.
func slicePorts(svc *corev1.Service, ports portMap) []discoveryv1.EndpointPort {
	out := []discoveryv1.EndpointPort{}
	for _, sp := range svc.Spec.Ports {
		target := sp.TargetPort
		if target.Type == intstr.Int && target.IntVal == 0 {
			target = intstr.FromInt32(sp.Port)
		}
		local, ok := ports.resolve(target)
		if !ok {
			continue
		}
		protocol := sp.Protocol
		if protocol == "" {
			protocol = corev1.ProtocolTCP
		}
		out = append(out, discoveryv1.EndpointPort{
			Name: ptr.To(sp.Name), Port: ptr.To(local), Protocol: ptr.To(protocol), AppProtocol: sp.AppProtocol,
		})
	}
	return out
}
