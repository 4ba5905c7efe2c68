package main

import (
	"context"
	"io"

	"github.com/knitops/knit/dataplane/queue/queuecmd"
)

// runQueue is `knit queue`. Beside an app, the local runtime prefers the
// knit-queue binary (cmd/knit-queue), which runs the same code and starts
// in a fraction of the time the whole knit binary needs.
func runQueue(ctx context.Context, args []string, _, stderr io.Writer) error {
	return queuecmd.Run(ctx, "knit queue", args, stderr)
}
