//go:build !linux

package runtime

import "errors"

// checkMounts: mount namespaces are Linux's.
func checkMounts() error {
	return errors.Join(errMountsUnsupported, errors.New("this is not Linux"))
}

// enter has nothing to enter outside Linux; replicas that mount volumes
// were refused before they got here (mountSupport).
func (p *mountPlan) enter() (stuck bool, err error) {
	if p.empty() {
		return false, nil
	}
	return false, checkMounts()
}
