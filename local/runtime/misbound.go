package runtime

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// In the shared network a replica's ports are not the declared ones
// (portMap), and an app that ignores PORT and binds the declared port
// itself — :8080 hard-coded, as Knative's test images and many real apps
// do — is never reached. Its readiness failure then blames whoever probes
// it, usually the queue-proxy ("container queue-proxy readiness probe
// failed: …"). When a readiness failure is reported, misbinding looks at
// the TCP ports the replica's containers actually listen on (Linux:
// listeningPorts) and, for a container that listens but on none of its
// ports, says so instead. Nothing is read on a probe that merely fails;
// only a failure that is reported costs a look, and while it stands,
// another now and then (explainLater), for an app that binds after its
// probe failure is reported.

// misbound is a container that listens, but on none of the ports its
// replica was given.
type misbound struct {
	container string
	listens   []int32 // the ports it listens on, sorted
	// env is the variable that tells it where to listen (PORT): one of
	// its env set to the declared port, which knit dev rewrote; "" if none.
	env string
	// port is the replica's port for declared, the container's first
	// containerPort.
	port, declared int32
}

// findMisbound says whether c, listening on listens, is misbound in a
// replica with ports; nil when it listens on one of its ports, or on
// none at all (still starting, or not an app that listens).
func findMisbound(c *corev1.Container, ports portMap, listens []int32) *misbound {
	if len(c.Ports) == 0 || len(listens) == 0 {
		return nil
	}
	for _, cp := range c.Ports {
		if local, ok := ports.byNumber[cp.ContainerPort]; ok && slices.Contains(listens, local) {
			return nil
		}
	}
	declared := c.Ports[0].ContainerPort
	local, ok := ports.byNumber[declared]
	if !ok {
		return nil
	}
	return &misbound{container: c.Name, listens: listens, env: portVariable(c, declared), port: local, declared: declared}
}

// portVariable is the variable of c's env that tells it port: PORT when
// it does, else the first that does; "" if none.
func portVariable(c *corev1.Container, port int32) string {
	want := strconv.Itoa(int(port))
	name := ""
	for _, e := range c.Env {
		if e.ValueFrom != nil || e.Value != want {
			continue
		}
		if e.Name == "PORT" {
			return e.Name
		}
		if name == "" {
			name = e.Name
		}
	}
	return name
}

// String is the message the Deployment shows for a misbound container:
// what it listens on, where it should, and what to do.
func (m *misbound) String() string {
	listens := make([]string, len(m.listens))
	for i, p := range m.listens {
		listens[i] = ":" + strconv.Itoa(int(p))
	}
	where, fix := fmt.Sprintf("its port %d", m.port),
		fmt.Sprintf("read the port from an environment variable set to %d, which knit dev sets to the replica's port", m.declared)
	if m.env != "" {
		where, fix = fmt.Sprintf("its %s %d", m.env, m.port), "listen on $"+m.env
	}
	head := fmt.Sprintf("container %s listens on %s, not on %s", m.container, strings.Join(listens, ", "), where)
	if slices.Contains(m.listens, m.declared) {
		return fmt.Sprintf("%s: knit dev's shared network gives each replica other ports than the declared ones "+
			"(run knit dev as root for a network of its own per replica, where %d is the real port), or %s", head, m.declared, fix)
	}
	return fmt.Sprintf("%s (containerPort %d in knit dev's shared network): %s", head, m.declared, fix)
}

// misbinding is the message for the first misbound container of the
// replica; "" when there is none, or the replica has a network of its own
// (where the declared ports are the real ones).
func (r *replica) misbinding() string {
	if r.net == nil || r.net.ns != nil {
		return ""
	}
	r.mu.Lock()
	pids := make([]int, len(r.containers))
	runs := make([]string, len(r.containers))
	for i, c := range r.containers {
		if c.running {
			pids[i], runs[i] = c.pid, strings.TrimPrefix(c.containerID, "runc://")
		}
	}
	r.mu.Unlock()
	for i, pid := range pids {
		c := &r.spec.Containers[i]
		if pid <= 0 || len(c.Ports) == 0 {
			continue
		}
		if runs[i] != "" {
			var err error
			if pid, err = r.rt.opts.OCI.appProcessGroup(context.Background(), runs[i]); err != nil {
				continue
			}
		}
		listens, err := listeningPorts(pid)
		if err != nil {
			r.log.V(1).Info("Listening ports not read", "container", c.Name, "error", err.Error())
			continue
		}
		if m := findMisbound(c, r.ports, listens); m != nil {
			return m.String()
		}
	}
	return ""
}

// explainProbeFailure is the message of a readiness failure: in the
// shared network a misbound container's, if one is, else failing itself.
func (r *replica) explainProbeFailure(failing string) string {
	if failing == "" {
		return ""
	}
	if msg := r.misbinding(); msg != "" {
		return msg
	}
	return failing
}

// explainLater looks for a misbound container again, with backoff, while
// container i's process pid keeps failing its readiness probe with
// failing, and puts what it finds in failing's place: an app may bind
// (on the wrong port) seconds after the failure was reported, as a JVM
// does. It ends with ctx (the process's probing).
func (r *replica) explainLater(ctx context.Context, i, pid int, failing string) {
	if r.net == nil || r.net.ns != nil {
		return
	}
	for attempt := 1; sleepCtx(ctx, r.rt.opts.Backoff.Delay(attempt)); attempt++ {
		r.mu.Lock()
		standing := r.containers[i].pid == pid && r.containers[i].probe == failing
		r.mu.Unlock()
		if !standing {
			return
		}
		if msg := r.misbinding(); msg != "" {
			r.update(regular(i), func(s *containerState) {
				if s.pid == pid && s.probe == failing {
					s.probe = msg
				}
			})
			return
		}
	}
}

// tcpListeners reads a /proc/net/tcp or tcp6 table: the port of every
// listening socket, by inode. Lines are
// "sl local_address rem_address st … inode …", the local address
// hex "ADDR:PORT" and st 0A for LISTEN.
func tcpListeners(table []byte) map[uint64]int32 {
	const (
		localField, stateField, inodeField = 1, 3, 9
		listen                             = "0A"
	)
	out := map[uint64]int32{}
	for line := range bytes.Lines(table) {
		f := strings.Fields(string(line))
		if len(f) <= inodeField || f[stateField] != listen {
			continue // the header, or not listening
		}
		colon := strings.LastIndexByte(f[localField], ':')
		if colon < 0 {
			continue
		}
		port, err := strconv.ParseUint(f[localField][colon+1:], 16, 16)
		if err != nil {
			continue
		}
		inode, err := strconv.ParseUint(f[inodeField], 10, 64)
		if err != nil || inode == 0 {
			continue
		}
		out[inode] = int32(port)
	}
	return out
}
