package view

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitExisting(t *testing.T) {
	existing := map[string]bool{"/": true, "/var": true, "/var/run": true, "/etc": true, "/etc/hosts": true}
	exists := func(p string) (bool, error) {
		if p == "/broken" {
			return false, errors.New("permission denied")
		}
		return existing[p], nil
	}
	for _, tc := range []struct {
		target, ancestor string
		missing          []string
		wantErr          bool
	}{
		{target: "/hello/world", ancestor: "/", missing: []string{"hello", "world"}},
		{target: "/var/run/secrets/token", ancestor: "/var/run", missing: []string{"secrets", "token"}},
		{target: "/etc/hosts", ancestor: "/etc/hosts"},
		{target: "/etc//hosts/", ancestor: "/etc/hosts"},
		{target: "/", ancestor: "/"},
		{target: "/broken/x", wantErr: true},
		{target: "relative/path", wantErr: true},
	} {
		ancestor, missing, err := splitExisting(tc.target, exists)
		if (err != nil) != tc.wantErr || ancestor != tc.ancestor || !cmp.Equal(missing, tc.missing) {
			t.Errorf("splitExisting(%q) = %q, %q, %v; want %q, %q, error %v", tc.target, ancestor, missing, err, tc.ancestor, tc.missing, tc.wantErr)
		}
	}
}

func TestSortMounts(t *testing.T) {
	ms := []Mount{{Target: "/a/b/c"}, {Target: "/x"}, {Target: "/a/b"}, {Target: "/a"}, {Target: "/y"}}
	SortMounts(ms)
	var got []string
	for _, m := range ms {
		got = append(got, m.Target)
	}
	if want := []string{"/x", "/a", "/y", "/a/b", "/a/b/c"}; !cmp.Equal(got, want) {
		t.Errorf("order = %v, want %v (parents first, stable)", got, want)
	}
}

func TestHostname(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"hello-00001-deployment-5d8f-1", "hello-00001-deployment-5d8f-1"},
		{strings.Repeat("a", 63), strings.Repeat("a", 63)},
		{strings.Repeat("a", 62) + "-b", strings.Repeat("a", 62)}, // the cut ends on '-'
		{strings.Repeat("a", 61) + ".-bc", strings.Repeat("a", 61)},
	} {
		if got := Hostname(tc.name); got != tc.want {
			t.Errorf("Hostname(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}
