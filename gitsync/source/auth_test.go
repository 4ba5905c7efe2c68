package source

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		userinfo bool
	}{
		{in: "https://github.com/a/b.git", want: "https://github.com/a/b.git"},
		{in: "https://me:s3cret@github.com/a/b.git", want: "https://github.com/a/b.git", userinfo: true},
		{in: "https://ghp_s3cret@github.com/a/b.git", want: "https://github.com/a/b.git", userinfo: true},
		{in: "https://me:s3c@ret@github.com/a/b.git", want: "https://github.com/a/b.git", userinfo: true},
		{in: "https://me:s3cret%zz@github.com/a", want: "https://github.com/a", userinfo: true},
		{in: "https://github.com/a/b.git?token=s3cret#s3cret", want: "https://github.com/a/b.git"},
		{in: "https://github.com/a@b.git", want: "https://github.com/a@b.git"},
		{in: "/tmp/repo", want: "/tmp/repo"},
	} {
		if got := RedactURL(tc.in); got != tc.want || strings.Contains(got, "s3c") {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := HasUserinfo(tc.in); got != tc.userinfo {
			t.Errorf("HasUserinfo(%q) = %t, want %t", tc.in, got, tc.userinfo)
		}
	}
}

func TestCheckCredentialsSecret(t *testing.T) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"}}
	if err := CheckCredentialsSecret(s); err == nil || !strings.Contains(err.Error(), "kubectl label secret -n ns creds knit.dev/git-credentials=true") {
		t.Errorf("an unlabelled Secret: %v, want a refusal saying how to label it", err)
	}
	s.Labels = map[string]string{CredentialsLabel: "false"}
	if err := CheckCredentialsSecret(s); err == nil {
		t.Error("a Secret labelled false is accepted")
	}
	s.Labels[CredentialsLabel] = "true"
	if err := CheckCredentialsSecret(s); err != nil {
		t.Errorf("a labelled Secret: %v", err)
	}
}

func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"https://me:s3cret@host/a", "http://a@b@c/d", "x://@", "https://h/p?q#f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := RedactURL(raw)
		if HasUserinfo(got) {
			t.Errorf("RedactURL(%q) = %q still carries user information", raw, got)
		}
	})
}
