package dev

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// activatorPortFile keeps the activator's port across restarts.
const activatorPortFile = "activator-port"

// listenActivator binds the activator on loopback, on the port it had in
// the last run when that port is free, else on any free one. Every
// revision at zero has the activator's address in its public endpoints,
// stored in the API: keeping the port keeps those endpoints true from the
// first request after a restart, instead of refused until each
// ServerlessService is reconciled again.
func listenActivator(stateDir string) (*activatorPlane, error) {
	file := filepath.Join(stateDir, activatorPortFile)
	var srv *platform.Server
	if last, err := os.ReadFile(file); err == nil {
		if port, err := strconv.Atoi(strings.TrimSpace(string(last))); err == nil && port > 0 {
			srv, _ = listen("activator", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil)
		}
	}
	if srv == nil {
		var err error
		if srv, err = listen("activator", "127.0.0.1:0", nil); err != nil {
			return nil, err
		}
	}
	a := &activatorPlane{srv: srv}
	if err := os.WriteFile(file, []byte(strconv.Itoa(int(a.port()))+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("remember the activator's port: %w", err)
	}
	return a, nil
}

func (a *activatorPlane) port() int32 { return int32(a.srv.Listener.Addr().(*net.TCPAddr).Port) }

// publish writes knit-system/knit-activator and its EndpointSlice, which
// the ServerlessService reconciler mirrors into a revision's public
// endpoints in Proxy mode. The address is FQDN "127.0.0.1": the API
// refuses loopback IPs in IPv4 slices. moved says whether the slice named
// another port before (or did not exist), so that every public endpoint
// mirroring it is stale.
func (a *activatorPlane) publish(ctx context.Context, c client.Client) (moved bool, err error) {
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
	var before discoveryv1.EndpointSlice
	switch err := c.Get(ctx, client.ObjectKeyFromObject(slice), &before); {
	case apierrors.IsNotFound(err):
		moved = true
	case err != nil:
		return false, fmt.Errorf("read the activator's endpoints: %w", err)
	default:
		moved = len(before.Ports) != 1 || ptr.Deref(before.Ports[0].Port, 0) != a.port()
	}
	for _, obj := range []client.Object{svc, slice} {
		if err := applyObject(ctx, c, obj); err != nil {
			return false, fmt.Errorf("publish the activator: %w", err)
		}
	}
	return moved, nil
}
