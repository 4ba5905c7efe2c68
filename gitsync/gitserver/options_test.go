package gitserver

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{
		"app":                   true,
		"a":                     true,
		"0":                     true,
		"hello-world-2":         true,
		strings.Repeat("a", 63): true,
		strings.Repeat("a", 64): false,
		"":                      false,
		"App":                   false,
		"-app":                  false,
		"app-":                  false,
		"a.b":                   false,
		"..":                    false,
		"a/b":                   false,
		"a_b":                   false,
		"a b":                   false,
		"a;rm -rf":              false,
		"ünï":                   false,
	} {
		if err := ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%t", name, err, ok)
		}
	}
}

func TestOptions(t *testing.T) {
	o := Options{Root: "repos", Token: StaticToken("t")}
	if err := o.Defaults(); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.PathPrefix != "/git" || o.MaxPushBytes != DefaultMaxPushBytes || o.Git == "" || !strings.HasPrefix(o.Root, "/") {
		t.Errorf("defaults: %+v", o)
	}
	for _, bad := range []Options{
		{},
		{Root: "/r"}, // no token
		{Root: "/r", Token: StaticToken("t"), PathPrefix: "git"},
		{Root: "/r", Token: StaticToken("t"), PathPrefix: "/git/"},
		{Root: "/r", Token: StaticToken("t"), MaxPushBytes: -1},
	} {
		if err := bad.Defaults(); err != nil {
			t.Fatal(err)
		}
		if bad.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", bad)
		}
	}
}

func TestDiffRefs(t *testing.T) {
	before := map[string]string{"refs/heads/main": "a", "refs/heads/old": "b", "refs/tags/v1": "c"}
	after := map[string]string{"refs/heads/main": "d", "refs/heads/new": "e", "refs/tags/v1": "c"}
	want := []RefUpdate{
		{Ref: "refs/heads/main", Old: "a", New: "d"},
		{Ref: "refs/heads/new", Old: ZeroSHA, New: "e"},
		{Ref: "refs/heads/old", Old: "b", New: ZeroSHA},
	}
	if diff := cmp.Diff(want, diffRefs(before, after)); diff != "" {
		t.Errorf("diffRefs (-want +got):\n%s", diff)
	}
}
