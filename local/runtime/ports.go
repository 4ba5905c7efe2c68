package runtime

import (
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// portMap is one replica's ports. In the shared network every replica
// shares 127.0.0.1, so each containerPort of the pod template gets a free
// port of its own; in an isolated network a replica has its own loopback,
// as a pod does, and every port is the declared one (an app hard-coding
// :8080 works there). Containers of a pod share one network namespace in
// Kubernetes, so the map is pod-wide, like port numbers are in a pod.
type portMap struct {
	byNumber map[int32]int32
	byName   map[string]int32
}

// allocatePorts maps every containerPort declared in spec to a port from
// free, or to itself when free is nil (an isolated network). A number
// declared twice maps once; a name maps to the first container that
// declares it, as Kubernetes resolves named ports.
func allocatePorts(spec *corev1.PodSpec, free func() (int32, error)) (portMap, error) {
	m := portMap{byNumber: map[int32]int32{}, byName: map[string]int32{}}
	taken := map[int32]bool{}
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			local, ok := m.byNumber[p.ContainerPort]
			if !ok && free == nil {
				local, ok = p.ContainerPort, true
				m.byNumber[p.ContainerPort] = local
			}
			if !ok {
				var err error
				if local, err = distinctPort(free, taken); err != nil {
					return portMap{}, fmt.Errorf("allocate a loopback port for %s port %d: %w", c.Name, p.ContainerPort, err)
				}
				m.byNumber[p.ContainerPort] = local
			}
			if _, taken := m.byName[p.Name]; p.Name != "" && !taken {
				m.byName[p.Name] = local
			}
		}
	}
	return m, nil
}

// distinctPort is a port from free that taken does not hold yet, which it
// then holds. free releases each port before the next call, and the
// kernel may hand the same one out again: two of a replica's ports were
// once one ("QUEUE_ADMIN_PORT: port 35821 is already QUEUE_SERVING_PORT",
// once in 200 replicas), and the replica crash-looped on it.
func distinctPort(free func() (int32, error), taken map[int32]bool) (int32, error) {
	const attempts = 16
	for range attempts {
		port, err := free()
		if err != nil {
			return 0, err
		}
		if !taken[port] {
			taken[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("no port distinct from the replica's others in %d attempts", attempts)
}

// freeLoopbackPort asks the kernel for a port nobody listens on. It is
// released at once for the replica to bind, so the kernel may hand it out
// again before then: the runtime skips ports its live replicas were
// given (unassignedPort), and distinctPort those of the same replica.
func freeLoopbackPort() (int32, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return int32(ln.Addr().(*net.TCPAddr).Port), nil
}

// resolve maps a port reference (a Service targetPort, a probe port) to
// the replica's loopback port. A number nobody declared passes through, as
// in Kubernetes; a name nobody declared does not resolve.
func (m portMap) resolve(p intstr.IntOrString) (int32, bool) {
	if p.Type == intstr.String {
		local, ok := m.byName[p.StrVal]
		return local, ok
	}
	if local, ok := m.byNumber[p.IntVal]; ok {
		return local, true
	}
	return p.IntVal, p.IntVal != 0
}

// rewrite maps an environment value that is exactly a declared port
// number (PORT=8080, USER_PORT=8080, QUEUE_SERVING_PORT=8012) to the
// replica's port, so the programs agree on where to listen and connect.
func (m portMap) rewrite(value string) string {
	n, err := strconv.ParseInt(value, 10, 32)
	if err != nil || strconv.FormatInt(n, 10) != value {
		return value
	}
	if local, ok := m.byNumber[int32(n)]; ok {
		return strconv.Itoa(int(local))
	}
	return value
}
