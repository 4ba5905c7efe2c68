package plan

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct{ name, got, want string }{
		{"revision", RevisionName("hello", sha1), "hello-0123456"},
		{"revision of a long service fits 63", RevisionName(long, sha1), strings.Repeat("a", 23) + "0f5c6c4e740bfcc08c3c26ccb2673d46-0123456"},
		// Two long Services that share their first 50 characters get two
		// names on one branch (cutting alone gave both the same).
		{"long service on a branch", ServiceName(long+"x", "feature", false), strings.Repeat("a", 23) + "e9134c601c4c855dcbf2bbed4acc4fd5-feature"},
		{"another long service on that branch", ServiceName(long+"y", "feature", false), strings.Repeat("a", 23) + "3d91f146eb16979cf3a859ecf54357f2-feature"},
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
