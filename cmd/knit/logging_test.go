package main

import (
	"bytes"
	"log"
	"log/slog"
	"strings"
	"testing"
)

// -v reaches slog.Default(), which the activator and the event dispatcher
// log through, with the same levels as controller-runtime and klog.
func TestSetupLoggingSetsSlogDefault(t *testing.T) {
	prev, prevOut, prevFlags := slog.Default(), log.Writer(), log.Flags()
	prevLevel := slog.SetLogLoggerLevel(slog.LevelInfo) // read it; setupLogging sets it
	t.Cleanup(func() {
		slog.SetDefault(prev)
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
		slog.SetLogLoggerLevel(prevLevel)
	})
	for _, tc := range []struct {
		verbosity         int
		info, debug, warn bool
		stdLog            bool // the log package, e.g. net/http's errors
	}{
		{verbosity: 0, warn: true, stdLog: true},
		{verbosity: 1, info: true, warn: true, stdLog: true},
		{verbosity: 5, info: true, debug: true, warn: true, stdLog: true},
	} {
		var out bytes.Buffer
		setupLogging(&out, tc.verbosity)
		slog.Info("an info line")
		slog.Debug("a debug line")
		slog.Warn("a warning line")
		log.Print("a log package line")
		for _, c := range []struct {
			line string
			want bool
		}{{"an info line", tc.info}, {"a debug line", tc.debug}, {"a warning line", tc.warn}, {"a log package line", tc.stdLog}} {
			if got := strings.Contains(out.String(), c.line); got != c.want {
				t.Errorf("-v=%d: slog.Default() logged %q: %v, want %v; output:\n%s", tc.verbosity, c.line, got, c.want, out.String())
			}
		}
	}
}
