package acme

import "time"

// RenewAt is when to renew a certificate valid from notBefore to
// notAfter: once a third of its lifetime remains. For a 90-day
// certificate that is day 60, as Let's Encrypt advises; a share rather
// than a fixed margin keeps working as lifetimes shrink (a 6-day
// certificate renews with 2 days left, a 5-minute test certificate at
// 3m20s) and leaves room for a failed attempt or two, RateLimited ones
// included, before the old certificate ends. A certificate with no
// lifetime (notAfter not after notBefore) is due at once: at notBefore.
func RenewAt(notBefore, notAfter time.Time) time.Time {
	life := notAfter.Sub(notBefore)
	if life <= 0 {
		return notBefore
	}
	return notAfter.Add(-life / 3)
}
