package githubapp

import "testing"

// FuzzFromSecret: whatever a Secret holds, FromSecret accepts only whole
// credentials and never panics.
func FuzzFromSecret(f *testing.F) {
	f.Add([]byte("1"), []byte("2"), []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, app, installation, key []byte) {
		c, err := FromSecret(map[string][]byte{KeyAppID: app, KeyInstallationID: installation, KeyPrivateKey: key})
		if err == nil && (c.AppID <= 0 || c.InstallationID <= 0 || c.key == nil) {
			t.Fatalf("accepted %+v", c)
		}
	})
}
