package ingress

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// A client on the Internet cannot send the headers knit's hops use among
// themselves: not K-Original-Host (which would become the app's Host),
// not the probe headers (which would get the queue-proxy's answer), not
// K-Proxy-Request (counted apart by the autoscaler), not a Revision of
// its choosing, and not their underscore spellings, nor forwarding
// headers of its own. The hops behind see the ingress's headers only.
func TestRouterStripsInternalHeadersFromClients(t *testing.T) {
	seen := make(chan http.Header, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		seen <- h
	}))
	t.Cleanup(backend.Close)
	port := int32(backend.Listener.Addr().(*net.TCPAddr).Port)
	r := NewRouter()
	r.Update(Options{}.Build(
		[]servingv1.Route{route("hello", nil, "http://hello.default.localhost", servingv1.TrafficTarget{RevisionName: "hello-1", Percent: ptr.To[int64](100)})},
		[]discoveryv1.EndpointSlice{slice("hello-1", port, true, "127.0.0.1")},
	))
	req := httptest.NewRequest(http.MethodGet, "http://hello.default.localhost/", nil)
	for k, v := range map[string]string{
		"K-Original-Host":           "admin.internal",
		"K-Kubelet-Probe":           "1",
		"K-Network-Probe":           "queue",
		"K-Proxy-Request":           "activator",
		"Knative-Serving-Revision":  "other-1",
		"Knative-Serving-Namespace": "kube-system",
		"X-Forwarded-For":           "10.0.0.1",
		"X-Forwarded-Host":          "admin.internal",
		"X-Forwarded-Proto":         "https",
		"Forwarded":                 "for=10.0.0.1",
		"X-Custom":                  "kept",
		"Knit-Route-Signature":      "forged",
		"X_Custom":                  "kept too",
	} {
		req.Header[k] = []string{v}
	}
	for _, k := range []string{"X_Forwarded_For", "x_forwarded_proto", "K_Original_Host", "Knative_Serving_Revision", "K_Kubelet_Probe"} {
		req.Header[k] = []string{"spoofed"}
	}
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("routed request = %d %q", w.Code, w.Body)
	}
	got := <-seen
	if sig := got["Knit-Route-Signature"]; len(sig) > 0 && sig[0] == "forged" {
		t.Error("the client's route signature reached the hop behind")
	}
	for _, k := range []string{"Accept-Encoding", "User-Agent", "Knit-Route-Signature"} { // the last is the ingress's own, if it signs
		delete(got, k)
	}
	want := http.Header{
		"Host":                      {"hello.default.localhost"},
		"Knative-Serving-Revision":  {"hello-1"},
		"Knative-Serving-Namespace": {"default"},
		"X-Forwarded-For":           {"192.0.2.1"},
		"X-Forwarded-Host":          {"hello.default.localhost"},
		"X-Forwarded-Proto":         {"http"},
		"Forwarded":                 {`for=192.0.2.1;host="hello.default.localhost";proto=http`},
		"X-Custom":                  {"kept"},
		"X_custom":                  {"kept too"}, // canonical on the wire: upper case only after a dash
	}
	if diff := cmp.Diff(want, got); diff != "" {
		b, _ := json.Marshal(got)
		t.Errorf("the hop behind the ingress saw (-want +got):\n%s\n%s", diff, b)
	}
}
