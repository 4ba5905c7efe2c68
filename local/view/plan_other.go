//go:build !linux

package view

import "errors"

// checkMounts: mount namespaces are Linux's.
func checkMounts() error {
	return errors.Join(ErrUnsupported, errors.New("this is not Linux"))
}

// Enter has nothing to enter outside Linux; replicas that mount volumes
// were refused before they got here (Supported).
func (p *Plan) Enter() (stuck bool, err error) {
	if p.Empty() {
		return false, nil
	}
	return false, checkMounts()
}
