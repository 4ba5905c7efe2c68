// Command knit-queue is the queue-proxy alone: what `knit queue` runs,
// linked without the control plane, so that a replica's sidecar starts in
// a few milliseconds — it is on the path of every cold start. knit dev's
// runtime uses it when it lies beside the knit binary (make build puts it
// there) and falls back to `knit queue` otherwise.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/knitops/knit/dataplane/queue/queuecmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := queuecmd.Run(ctx, "knit-queue", os.Args[1:], os.Stderr); errors.Is(err, flag.ErrHelp) {
		stop()
		os.Exit(2)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "knit-queue:", err)
		stop()
		os.Exit(1)
	}
}
