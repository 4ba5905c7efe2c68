package controlplane

import (
	"fmt"
	"net"
	"strconv"
)

// reservePorts listens on each wanted loopback port (0 = any) at the same
// time, so the kernel hands out distinct ones, then releases them for the
// children to bind. Another process could grab one in between; the child
// would then fail at once with "address already in use" in its log.
func reservePorts(wanted ...int) ([]int, error) {
	ports := make([]int, 0, len(wanted))
	for _, want := range wanted {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(want)))
		if err != nil {
			return nil, fmt.Errorf("port %d: %w", want, err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
