package dev

import (
	"strings"
	"testing"
)

// A --build-allow-host knit dev cannot read stops it before anything
// starts, saying which value and why.
func TestValidateBuildAllowHosts(t *testing.T) {
	for _, tc := range []struct {
		hosts []string
		err   string
	}{
		{hosts: nil},
		{hosts: []string{"pypi.org,files.pythonhosted.org", "registry.npmjs.org", "127.0.0.1:8080"}},
		{hosts: []string{"pypi.org", "https://pypi.org/simple"}, err: `--build-allow-host "https://pypi.org/simple": want HOST[:PORT], not a URL`},
		{hosts: []string{"*.org"}, err: `--build-allow-host "*.org": a wildcard is *.DOMAIN`},
	} {
		o := Options{BuildAllowHosts: tc.hosts}
		o.Defaults()
		err := o.Validate()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Validate(%q) = %v, want %q", tc.hosts, err, tc.err)
		}
	}
}
