package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestTCPListeners(t *testing.T) {
	const (
		tcpHeader  = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     \n"
		tcp6Header = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	)
	for _, tc := range []struct {
		name  string
		table string
		want  map[uint64]int32
	}{
		{"empty", "", map[uint64]int32{}},
		{"header only", tcpHeader, map[uint64]int32{}},
		{"tcp: loopback and every interface listening, a connection not", tcpHeader +
			"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 10656497 2 000000000c61687b 100 0 0 10 0                  \n" +
			"   1: 00000000:A2F2 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 10653966 2 00000000288bd3da 100 0 0 10 0                  \n" +
			"   2: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 10657000 1 0000000000000000 20 4 30 10 -1                 \n",
			map[uint64]int32{10656497: 8080, 10653966: 41714}},
		{"tcp6: every interface and ::1", tcp6Header +
			"   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1 0000000000000000 100 0 0 10 0\n" +
			"   1: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 223 1 0000000000000000 100 0 0 10 0\n",
			map[uint64]int32{222: 8080, 223: 80}},
		{"a time-wait socket has inode 0", tcpHeader +
			"   0: 0100007F:1F90 0100007F:D431 06 00000000:00000000 03:00000A2B 00000000     0        0 0 3 0000000000000000\n" +
			"   1: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 2 0000000000000000 100 0 0 10 0\n",
			map[uint64]int32{}},
		{"malformed lines are skipped", tcpHeader +
			"   0: 0100007F 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 2\n" +
			"   1: 0100007F:ZZZZ 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 2 2\n" +
			"   2: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 x 2\n" +
			"   3: 0100007F:1F90 00000000:0000 0A\n",
			map[uint64]int32{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tcpListeners([]byte(tc.table))); diff != "" {
				t.Errorf("tcpListeners (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMisboundMessage(t *testing.T) {
	app := func(env ...corev1.EnvVar) *corev1.Container {
		return &corev1.Container{Name: "user-container", Env: env, Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}
	}
	ports := portMap{byNumber: map[int32]int32{8080: 41234, 8012: 41300}}
	port := corev1.EnvVar{Name: "PORT", Value: "8080"}
	for _, tc := range []struct {
		name      string
		container *corev1.Container
		listens   []int32
		want      string // "": not misbound
	}{
		{"listens on its PORT", app(port), []int32{41234}, ""},
		{"listens on its PORT and another", app(port), []int32{9090, 41234}, ""},
		{"listens on nothing yet", app(port), nil, ""},
		{"declares no port", &corev1.Container{Name: "sidecar"}, []int32{8080}, ""},
		{"hard-codes the declared port", app(port), []int32{8080},
			"container user-container listens on :8080, not on its PORT 41234: knit dev's shared network gives each replica other ports than the declared ones " +
				"(run knit dev as root for a network of its own per replica, where 8080 is the real port), or listen on $PORT"},
		{"the declared port and another", app(port), []int32{8080, 9090},
			"container user-container listens on :8080, :9090, not on its PORT 41234: knit dev's shared network gives each replica other ports than the declared ones " +
				"(run knit dev as root for a network of its own per replica, where 8080 is the real port), or listen on $PORT"},
		{"another port than the declared one", app(port), []int32{3000},
			"container user-container listens on :3000, not on its PORT 41234 (containerPort 8080 in knit dev's shared network): listen on $PORT"},
		{"told by another variable", app(corev1.EnvVar{Name: "HTTP_PORT", Value: "8080"}), []int32{8080},
			"container user-container listens on :8080, not on its HTTP_PORT 41234: knit dev's shared network gives each replica other ports than the declared ones " +
				"(run knit dev as root for a network of its own per replica, where 8080 is the real port), or listen on $HTTP_PORT"},
		{"PORT rather than an earlier variable", app(corev1.EnvVar{Name: "HTTP_PORT", Value: "8080"}, port), []int32{3000},
			"container user-container listens on :3000, not on its PORT 41234 (containerPort 8080 in knit dev's shared network): listen on $PORT"},
		{"told by no variable", app(corev1.EnvVar{Name: "PORT", ValueFrom: &corev1.EnvVarSource{}}), []int32{8080},
			"container user-container listens on :8080, not on its port 41234: knit dev's shared network gives each replica other ports than the declared ones " +
				"(run knit dev as root for a network of its own per replica, where 8080 is the real port), " +
				"or read the port from an environment variable set to 8080, which knit dev sets to the replica's port"},
		{"listens on another container's port", app(port), []int32{41300},
			"container user-container listens on :41300, not on its PORT 41234 (containerPort 8080 in knit dev's shared network): listen on $PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if m := findMisbound(tc.container, ports, tc.listens); m != nil {
				got = m.String()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}
