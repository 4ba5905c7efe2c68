package route

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/config"
	"github.com/knitops/knit/controllers/owned"
	"github.com/knitops/knit/controllers/route/resources"
)

// placeholders keeps rt's placeholder Services (resources.Placeholders)
// as they should be and deletes the ones of tags it no longer has. A name
// taken by a Service the Route does not own, or a write the API server
// refuses, marks IngressReady False with the reason; other errors retry.
func (r *Reconciler) placeholders(ctx context.Context, rt *servingv1.Route, n *config.Network) error {
	if r.internalIngress == "" {
		return nil
	}
	want, err := resources.Placeholders(rt, n, r.internalIngress)
	if err != nil {
		rt.Status.MarkDomainTemplateError(err.Error())
		return nil
	}
	var names []string
	for _, svc := range want {
		names = append(names, svc.Name)
		_, err := owned.Ensure(ctx, r.client, rt, "Service", svc, &corev1.Service{}, placeholderDiffers, updatePlaceholder)
		if err != nil {
			if reason, message, ok := owned.Failure(err); ok {
				rt.Status.MarkIngressNotConfigured(reason, message)
				return nil
			}
			return err
		}
	}
	return r.deleteStalePlaceholders(ctx, rt, names)
}

func placeholderDiffers(existing, desired *corev1.Service) bool {
	return existing.Spec.Type != desired.Spec.Type || existing.Spec.ExternalName != desired.Spec.ExternalName ||
		len(existing.Spec.Ports) != 1 || existing.Spec.Ports[0].Port != desired.Spec.Ports[0].Port
}

func updatePlaceholder(existing, desired *corev1.Service) {
	existing.Spec.Type, existing.Spec.ExternalName, existing.Spec.Ports = desired.Spec.Type, desired.Spec.ExternalName, desired.Spec.Ports
	existing.Spec.ClusterIP, existing.Spec.ClusterIPs = "", nil
}

// deleteStalePlaceholders deletes the Services rt owns that are not in
// keep: a removed tag's.
func (r *Reconciler) deleteStalePlaceholders(ctx context.Context, rt *servingv1.Route, keep []string) error {
	svcs := &corev1.ServiceList{}
	if err := r.client.List(ctx, svcs, client.InNamespace(rt.Namespace), client.MatchingLabels{servingv1.RouteLabelKey: rt.Name}); err != nil {
		return fmt.Errorf("list placeholder Services of Route %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		if slices.Contains(keep, svc.Name) || !metav1.IsControlledBy(svc, rt) {
			continue
		}
		if err := r.client.Delete(ctx, svc); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete placeholder Service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
	}
	return nil
}

// privateTags are the tags of rt whose own placeholder Service a user
// labelled networking.knative.dev/visibility: cluster-local, which makes
// that tag private on its own, as in Knative: its URL is in-cluster and
// the public ingress stops answering its host.
func (r *Reconciler) privateTags(ctx context.Context, rt *servingv1.Route, n *config.Network) (map[string]bool, error) {
	if r.internalIngress == "" {
		return nil, nil
	}
	svcs := &corev1.ServiceList{}
	if err := r.client.List(ctx, svcs, client.InNamespace(rt.Namespace),
		client.MatchingLabels{servingv1.RouteLabelKey: rt.Name, servingv1.VisibilityLabelKey: "cluster-local"}); err != nil {
		return nil, fmt.Errorf("list placeholder Services of Route %s/%s: %w", rt.Namespace, rt.Name, err)
	}
	private := map[string]bool{}
	for _, t := range rt.Spec.Traffic {
		if t.Tag == "" {
			continue
		}
		name, err := n.TagName(rt.Name, t.Tag)
		if err != nil {
			continue // URLs reports the template's error
		}
		for i := range svcs.Items {
			if svcs.Items[i].Name == name && metav1.IsControlledBy(&svcs.Items[i], rt) {
				private[t.Tag] = true
			}
		}
	}
	return private, nil
}
