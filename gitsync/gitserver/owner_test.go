package gitserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOwners(t *testing.T) {
	o := Owners{Default: "default", Repos: map[string]string{"shop": "team-a"}}
	for name, want := range map[string]string{"shop": "team-a", "hello": "default"} {
		if got := o.Namespace(name); got != want {
			t.Errorf("Namespace(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestParseOwners(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    map[string]string
		wantErr bool
	}{
		{in: "", want: map[string]string{}},
		{in: "shop=team-a, blog=team-b,", want: map[string]string{"shop": "team-a", "blog": "team-b"}},
		{in: "shop", wantErr: true},
		{in: "shop=Team_A", wantErr: true},
		{in: "../x=team-a", wantErr: true},
		{in: "shop=team-a,shop=team-b", wantErr: true},
	} {
		got, err := ParseOwners(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseOwners(%q) error = %v, want error %t", tc.in, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
			t.Errorf("ParseOwners(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestRepoName(t *testing.T) {
	const base = "http://knit-gitserver.knit-system.svc:8090"
	for _, tc := range []struct {
		url, want string
		ok        bool
	}{
		{base + "/git/hello.git", "hello", true},
		{base + "/git/hello", "hello", true},
		{base + "/git/hello.git/info/refs", "hello", true},
		{base + "/git/%68ello.git", "hello", true},
		{base + "/git/Hello.git", "", false},
		{base + "/git/", "", false},
		{"http://attacker.example/git/hello.git", "", false},
	} {
		got, ok := RepoName(base, tc.url)
		if got != tc.want && tc.ok || ok != tc.ok {
			t.Errorf("RepoName(%q) = %q, %t, want %q, %t", tc.url, got, ok, tc.want, tc.ok)
		}
	}
}
