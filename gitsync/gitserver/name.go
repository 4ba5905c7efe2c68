package gitserver

import (
	"fmt"
	"regexp"
)

var nameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidateName accepts the repository names the server serves: DNS-1123
// labels (lowercase letters, digits and '-', starting and ending with a
// letter or digit, at most 63 characters). A name is a directory under
// Root and, once knit syncs it, part of Kubernetes object names, so
// nothing else (no dots, slashes or "..") is ever let through.
func ValidateName(name string) error {
	if len(name) > 63 || !nameRE.MatchString(name) {
		return fmt.Errorf("invalid repository name %q: use lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters", name)
	}
	return nil
}
