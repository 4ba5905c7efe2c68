package names

import (
	"crypto/md5" //nolint:gosec // a name's fingerprint, not a secret: Knative's rule
	"encoding/hex"
	"fmt"
	"strings"
)

// longest is Kubernetes' limit for a DNS-1035 label, which Service names
// must be and every derived name is kept to.
const longest = 63

// head is how much of a parent a shortened name keeps: what is left of
// longest beside a hex md5.
const head = longest - 2*md5.Size

// Child is Knative's kmeta.ChildName: parent+suffix when that fits 63
// characters; else the parent's first characters, the md5 of the whole
// parent, then the suffix, 63 in all, so two long parents that share a
// head still get different children. A suffix of 31 characters or more
// leaves no room for that: the parent's head, the md5 of parent+suffix,
// and as much of the suffix as fits, less any trailing character that is
// not a letter or digit.
func Child(parent, suffix string) string {
	if len(parent)+len(suffix) <= longest {
		return parent + suffix
	}
	if head-len(suffix) <= 0 {
		sum := md5.Sum([]byte(parent + suffix)) //nolint:gosec // see import
		if len(parent) > head {
			parent = parent[:head]
		}
		n := parent + hex.EncodeToString(sum[:])
		if room := longest - len(n); room > 0 {
			n += suffix[:room]
		}
		return strings.TrimRightFunc(n, func(r rune) bool { return !isAlphanumeric(r) })
	}
	sum := md5.Sum([]byte(parent)) //nolint:gosec // see import
	return parent[:head-len(suffix)] + hex.EncodeToString(sum[:]) + suffix
}

func isAlphanumeric(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// Revision is what a Configuration's generation stamps when its template
// names none: <configuration>-<5-digit generation>, shortened by Child.
func Revision(configuration string, generation int64) string {
	return Child(configuration, fmt.Sprintf("-%05d", generation))
}

// Deployment is a Revision's Deployment: <revision>-deployment, shortened.
func Deployment(revision string) string { return Child(revision, "-deployment") }

// PrivateService is the Service over a Revision's replicas, named for its
// ServerlessService (which is named for the Revision): <sks>-private,
// shortened. Its EndpointSlices are what the autoscaler scrapes and the
// activator sends to; to go from one back to its SKS, read the
// ServerlessServiceLabelKey label the Service and its slices carry: a
// shortened name cannot be parsed back.
func PrivateService(sks string) string { return Child(sks, "-private") }
