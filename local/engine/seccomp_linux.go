package engine

import (
	"github.com/moby/profiles/seccomp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// defaultSeccomp is moby's default profile for spec's capabilities, the
// one containerd's RuntimeDefault is.
func defaultSeccomp(s *specs.Spec) (*specs.LinuxSeccomp, error) {
	return seccomp.GetDefaultProfile(s)
}
