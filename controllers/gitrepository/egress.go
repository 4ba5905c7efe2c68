package gitrepository

import (
	"errors"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/egress"
)

// ReasonEgressDenied is the Fetched condition's reason when knit's egress
// policy refuses the repository's URL: a scheme other than http(s), or an
// address (as written or as resolved) that is loopback, link-local or the
// control plane's own, unless an operator allows it in config-network's
// egress-allow. Nothing is sent there, credentials least of all.
const ReasonEgressDenied = "EgressDenied"

// fetchFailedReason is the Fetched condition's reason for a failed fetch.
func fetchFailedReason(err error) string {
	if denied := (*egress.DeniedError)(nil); errors.As(err, &denied) {
		return ReasonEgressDenied
	}
	return knitv1alpha1.ReasonFetchFailed
}
