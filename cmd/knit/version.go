package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// version is stamped by release builds with -ldflags "-X main.version=…".
var version = "dev"

func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	v := version
	if info, ok := debug.ReadBuildInfo(); ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	_, err := fmt.Fprintf(stdout, "knit %s\n", v)
	return err
}
