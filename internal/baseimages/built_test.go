//go:build !unit

package baseimages

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// The bases make base-images built: each pushed, read back, and its
// config as hack/bases writes it.
func TestBuiltBasesPush(t *testing.T) {
	host := startRegistry(t)
	for base, cmd := range map[string]string{"python": "python3", "node": "node"} {
		t.Run(base, func(t *testing.T) {
			dir, err := Dir(base)
			if err != nil {
				t.Fatalf("the %s base is not built (make test builds it first): %v", base, err)
			}
			ref := host + "/library/" + base + ":test"
			digest, err := Push(context.Background(), dir, ref)
			if err != nil {
				t.Fatalf("push %s: %v", base, err)
			}
			m, cf, got := pulled(t, ref)
			if got.String() != digest {
				t.Errorf("the registry serves %s, Push said %s", got, digest)
			}
			if len(m.Layers) != 1 || cf.OS != "linux" || cf.Architecture != "amd64" ||
				!reflect.DeepEqual(cf.Config.Cmd, []string{cmd}) ||
				!strings.Contains(cf.Config.Labels["dev.knit.base.packages"], "libc6=") {
				t.Errorf("%s: %d layers, %s/%s, config %+v", base, len(m.Layers), cf.OS, cf.Architecture, cf.Config)
			}
		})
	}
}
