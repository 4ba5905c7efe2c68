//go:build !linux

package buildkit

import "syscall"

// daemonAttrs: BuildKit's OCI worker runs on Linux only; elsewhere start
// fails at buildkitd, with its own words.
func daemonAttrs() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
