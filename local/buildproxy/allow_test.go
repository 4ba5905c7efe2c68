package buildproxy

import (
	"strings"
	"testing"
)

func TestParseAllowList(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   string // the list as String writes it
		err    string // a word of the error
	}{
		{values: nil, want: ""},
		{values: []string{"pypi.org,files.pythonhosted.org", "registry.npmjs.org"}, want: "pypi.org,files.pythonhosted.org,registry.npmjs.org"},
		{values: []string{" PyPI.org. , ,*.Example.org:8443,"}, want: "pypi.org,*.example.org:8443"},
		{values: []string{"127.0.0.1:8080", "::1", "[::1]:8080", "::ffff:10.0.0.1"}, want: "127.0.0.1:8080,::1,[::1]:8080,10.0.0.1"},
		{values: []string{"*"}, err: "wildcard"},
		{values: []string{"*.org"}, err: "two labels"},
		{values: []string{"*.*.example.org"}, err: "wildcard"},
		{values: []string{"pypi.org:0"}, err: "1 to 65535"},
		{values: []string{"pypi.org:65536"}, err: "1 to 65535"},
		{values: []string{"pypi.org:"}, err: "1 to 65535"},
		{values: []string{"https://pypi.org"}, err: "not a URL"},
		{values: []string{"pypi.org/simple"}, err: "want HOST"},
		{values: []string{"fe80::1%eth0"}, err: "zone"},
		{values: []string{"10.0.0.0/8"}, err: "want HOST"},
		{values: []string{"1.2.3"}, err: "want HOST"},
		{values: []string{"under_score.example"}, err: "want HOST"},
	} {
		got, err := ParseAllowList(tc.values...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "--build-allow-host") {
				t.Errorf("ParseAllowList(%q) = %v, %v; want an error of --build-allow-host saying %q", tc.values, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseAllowList(%q) = %q, %v; want %q", tc.values, got, err, tc.want)
		}
	}
}

func TestAllowListAllows(t *testing.T) {
	list, err := ParseAllowList("pypi.org,*.example.org,127.0.0.1:8080,[::1]:9090,10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		port uint16
		want bool
	}{
		{"pypi.org", 443, true},
		{"PyPI.org.", 80, true},
		{"pypi.org", 8080, false}, // a port-less rule allows 80 and 443 only
		{"files.pythonhosted.org", 443, false},
		{"evilpypi.org", 443, false},
		{"a.example.org", 443, true},
		{"a.b.example.org", 80, true},
		{"example.org", 443, false}, // *.example.org is its subdomains only
		{"badexample.org", 443, false},
		{"127.0.0.1", 8080, true},
		{"127.0.0.1", 80, false},
		{"localhost", 8080, false}, // a name is not the address it resolves to
		{"::1", 9090, true},
		{"::ffff:127.0.0.1", 8080, true},
		{"10.0.0.1", 443, true},
		{"10.0.0.1", 22, false},
	} {
		if got := list.Allows(tc.host, tc.port); got != tc.want {
			t.Errorf("Allows(%q, %d) = %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
	if (AllowList{}).Allows("pypi.org", 443) {
		t.Error("the empty list allows pypi.org")
	}
}
