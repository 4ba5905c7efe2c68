package plan

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct{ name, got, want string }{
		{"revision", RevisionName("hello", sha1), "hello-0123456"},
		{"revision of a long service fits 63", RevisionName(long, sha1), strings.Repeat("a", 55) + "-0123456"},
		{"pull request revision", PullRequestRevisionName("hello", 12, sha1), "hello-pr12-0123456"},
		{"tag", Tag(12), "pr-12"},
		{"main branch keeps the name", ServiceName("hello", "main", true), "hello"},
		{"other branch is suffixed", ServiceName("hello", "feature/Login_2", false), "hello-feature-login-2"},
		{"odd branch", ServiceName("hello", "__", false), "hello-branch"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
		if len(tt.got) > 63 {
			t.Errorf("%s = %q is longer than 63", tt.name, tt.got)
		}
	}
}
