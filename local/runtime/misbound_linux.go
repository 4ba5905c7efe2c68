package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// listeningPorts are the TCP ports the processes of process group pgid
// (a container's: its process leads one) listen on, read from /proc as
// ss -ltnp would: the group's members by /proc/<pid>/stat, their sockets'
// inodes by /proc/<pid>/fd, the ports of those inodes among the LISTEN
// entries of the network's tcp and tcp6 tables. A process gone meanwhile,
// or not this user's to read, is left out.
func listeningPorts(pgid int) ([]int32, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	inodes := map[uint64]bool{}
	var member string // a live member, whose net tables are the group's network's
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if group, _, err := processGroup(pid); err != nil || group != pgid {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		if err != nil {
			continue
		}
		member = e.Name()
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name()))
			if err != nil {
				continue
			}
			if inode, ok := strings.CutPrefix(link, "socket:["); ok {
				if n, err := strconv.ParseUint(strings.TrimSuffix(inode, "]"), 10, 64); err == nil {
					inodes[n] = true
				}
			}
		}
	}
	if len(inodes) == 0 {
		return nil, nil
	}
	var ports []int32
	for _, table := range []string{"tcp", "tcp6"} {
		content, err := os.ReadFile(filepath.Join("/proc", member, "net", table))
		if err != nil {
			continue // no IPv6, or the process is gone
		}
		for inode, port := range tcpListeners(content) {
			if inodes[inode] && !slices.Contains(ports, port) {
				ports = append(ports, port)
			}
		}
	}
	slices.Sort(ports)
	return ports, nil
}

// appProcessGroup is the process group of the app of container run id:
// the process the runtime supervises is runc, the app the container's
// init.
func (o *OCI) appProcessGroup(ctx context.Context, id string) (int, error) {
	app, err := o.Runc.InitPID(ctx, id)
	if err != nil {
		return 0, err
	}
	pgid, _, err := processGroup(app)
	return pgid, err
}
