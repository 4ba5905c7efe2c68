//go:build !linux

package view

// Apply has nothing to set off Linux, where containers get no views of
// their own and so no limits (a Plan's Limits are never applied).
func (p *Privileges) Apply(bool) error { return nil }
