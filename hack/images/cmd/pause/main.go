// Command pause is the pod sandbox's process in the test cluster
// (hack/cluster): it sleeps until SIGINT or SIGTERM and, as PID 1 of the
// pod, reaps the zombies it inherits, like Kubernetes' own pause.c. The
// cluster has no registry to pull registry.k8s.io/pause from, so it is
// built here and packed by imgbuild.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
