package dev

import (
	"context"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/platform"
)

// activatorPlane is knit dev's activator: its loopback server and the
// endpoints that make it the target of every revision in Proxy mode.
type activatorPlane struct {
	srv *platform.Server
}

// listenActivator binds the activator on a free loopback port.
func listenActivator() (*activatorPlane, error) {
	srv, err := listen("activator", "127.0.0.1:0", nil)
	if err != nil {
		return nil, err
	}
	return &activatorPlane{srv: srv}, nil
}

func (a *activatorPlane) port() int32 { return int32(a.srv.Listener.Addr().(*net.TCPAddr).Port) }

// publish writes knit-system/knit-activator and its EndpointSlice, which
// the ServerlessService reconciler mirrors into a revision's public
// endpoints in Proxy mode. The address is FQDN "127.0.0.1": the API
// refuses loopback IPs in IPv4 slices.
func (a *activatorPlane) publish(ctx context.Context, c client.Client) error {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: platform.ActivatorService.Namespace, Name: platform.ActivatorService.Service},
		Spec: corev1.ServiceSpec{
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	slice := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: platform.ActivatorService.Namespace, Name: platform.ActivatorService.Service + "-local",
			Labels: map[string]string{discoveryv1.LabelServiceName: platform.ActivatorService.Service, discoveryv1.LabelManagedBy: "knit-dev"},
		},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses: []string{"127.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			Hostname: ptr.To("activator-" + strconv.Itoa(int(a.port()))),
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(a.port()), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	for _, obj := range []client.Object{svc, slice} {
		if err := applyObject(ctx, c, obj); err != nil {
			return fmt.Errorf("publish the activator: %w", err)
		}
	}
	return nil
}
