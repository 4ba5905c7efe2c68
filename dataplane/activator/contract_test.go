package activator_test

import (
	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/dataplane/kpa"
)

// The in-process KPA is a Reporter: knit dev can hand it to the activator
// as is. (Only this test imports kpa; the activator itself does not.)
var _ activator.Reporter = (*kpa.KPA)(nil)
