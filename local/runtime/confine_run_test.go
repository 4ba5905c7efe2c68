//go:build !unit

package runtime

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/engine"
	"github.com/knitops/knit/local/view"
)

// capMask is the CapBnd/CapEff spelling of a set of capabilities.
func capMask(names []string) string {
	var bits uint64
	for _, n := range engine.CapabilityNumbers(names) {
		bits |= 1 << uint(n)
	}
	return fmt.Sprintf("%016x", bits)
}

// TestProcessesAreConfined: knit dev's own images (ko://, knit://) run as
// processes of this machine, confined as the engine confines an image:
// as ko's nonroot user unless asked, with no capabilities and none to
// gain (the bounding set is containerd's defaults, no_new_privs), and
// knit dev's state dir (admin kubeconfig, etcd's keys, the Git token)
// out of sight even of a container that asks for root.
func TestProcessesAreConfined(t *testing.T) {
	startSuite(t)
	if view.Supported() != nil {
		t.Skipf("confinement needs knit dev to run as root on Linux: %v", view.Supported())
	}
	t.Parallel()
	ns := newNamespace(t)
	secret := filepath.Join(suite.state, "runtime.log")
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("the state dir has no %s to hide: %v", secret, err)
	}
	for _, tc := range []struct {
		name    string
		sc      *corev1.SecurityContext
		uid     string
		capEff  []string
		capBnd  []string
		nnp     string
		service string
	}{{
		name: "nothing asked", uid: "65532 65532 65532 65532", capBnd: engine.DefaultCaps(), nnp: "1",
	}, {
		name: "root asked for, NET_RAW dropped", sc: &corev1.SecurityContext{RunAsUser: ptr.To[int64](0),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}},
		uid: "0 0 0 0", nnp: "1",
		capEff: withoutCap(engine.DefaultCaps(), "CAP_NET_RAW"), capBnd: withoutCap(engine.DefaultCaps(), "CAP_NET_RAW"),
	}, {
		name: "escalation allowed", sc: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)},
		uid: "65532 65532 65532 65532", capBnd: engine.DefaultCaps(), nnp: "0",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			name := fmt.Sprintf("confined-%d", len(tc.nnp)+len(tc.uid))
			app := appContainer("knit://serve")
			app.SecurityContext = tc.sc
			d := revisionDeployment(ns, name, 1, app)
			create(t, d)
			create(t, service(ns, name, map[string]string{"app": name}, intstr.FromString("http")))
			key := client.ObjectKeyFromObject(d)
			waitForDeployment(t, key, time.Minute, "available", available)
			pids := replicaPIDs(key)
			if len(pids) != 1 {
				t.Fatalf("pids %v, want 1", pids)
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pids[0]))
			if err != nil {
				t.Fatal(err)
			}
			got := procStatus(string(b))
			want := map[string]string{"Uid": tc.uid, "CapEff": capMask(tc.capEff), "CapBnd": capMask(tc.capBnd), "NoNewPrivs": tc.nnp}
			// A container whose root is a mirror of / (its binary bound at
			// /ko-app, out of its user's reach where knit dev keeps it)
			// loses CAP_SYS_CHROOT too, which would let root out of it.
			if noChroot := capMask(withoutCap(tc.capBnd, "CAP_SYS_CHROOT")); got["CapBnd"] == noChroot {
				want["CapBnd"] = noChroot
			}
			for k, v := range want {
				if strings.Join(strings.Fields(got[k]), " ") != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			port := *readySlices(t, ns, name, 1)[0].Ports[0].Port
			if status, body, _ := fileAt(t, http.MethodGet, port, secret, ""); status == http.StatusOK || !strings.Contains(body, "no such file or directory") {
				t.Errorf("the app read %s from knit dev's state dir: %d %q", secret, status, body)
			}
		})
	}
}

func withoutCap(caps []string, drop string) []string {
	var out []string
	for _, c := range caps {
		if c != drop {
			out = append(out, c)
		}
	}
	return out
}
