package gitserver

import "testing"

func TestOnServer(t *testing.T) {
	const base = "http://knit-gitserver.knit-system.svc:8090"
	for _, tc := range []struct {
		base, url string
		want      bool
	}{
		{base, base + "/git/hello.git", true},
		{base, base + "/git/hello", true},
		{base, "HTTP://KNIT-GITSERVER.knit-system.svc:8090/git/hello.git", true},
		{"http://127.0.0.1:80", "http://127.0.0.1/git/a.git", true},
		{"http://127.0.0.1", "http://127.0.0.1:80/git/a.git", true},
		{"http://[::1]:8090", "http://[::1]:8090/git/a.git", true},
		{base, base + "/hooks/generic/a", false},
		{base, base + "/gitx/a.git", false},
		{base, "https://knit-gitserver.knit-system.svc:8090/git/hello.git", false},
		{base, "http://knit-gitserver.knit-system.svc:8091/git/hello.git", false},
		{base, "http://knit-gitserver.knit-system.svc:8090.attacker.example/git/hello.git", false},
		{base, "http://knit-gitserver.knit-system.svc:8090@attacker.example/git/hello.git", false},
		{base, "http://attacker.example/git/hello.git?u=" + base, false},
		{base, "http://127.0.0.1:8090/git/steal.git", false},
		{base, "/git/hello.git", false},
		{base, "ssh://knit-gitserver.knit-system.svc:8090/git/hello.git", false},
		{"", base + "/git/hello.git", false},
		{"::not a url", base + "/git/hello.git", false},
	} {
		if got := OnServer(tc.base, tc.url); got != tc.want {
			t.Errorf("OnServer(%q, %q) = %t, want %t", tc.base, tc.url, got, tc.want)
		}
	}
}
