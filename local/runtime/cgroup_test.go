package runtime

import (
	"testing"

	"github.com/knitops/knit/local/nodefit"
)

// The whole tree weighs as the kubelet's kubepods: 1024 shares an
// allocatable CPU, every CPU of the machine when none is set.
func TestTreeShares(t *testing.T) {
	for _, tc := range []struct {
		cpuMilli, want int64
	}{
		{2000, 2048},
		{500, 512},
		{1, 2},            // the kernel's least
		{1 << 40, 262144}, // the kernel's most
		{0, nodefit.MachineAllocatable().CPUMilli * 1024 / 1000},
	} {
		if got := treeShares(tc.cpuMilli); got != tc.want {
			t.Errorf("treeShares(%d) = %d, want %d", tc.cpuMilli, got, tc.want)
		}
	}
}
