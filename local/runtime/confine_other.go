//go:build !linux

package runtime

// apply has nothing to set off Linux, where containers get no views of
// their own and so no limits (processPrivileges' are never applied).
func (p *privileges) apply(bool) error { return nil }
