package gitserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A push carrying a malformed object (here a commit whose author has no
// e-mail, which git's own tools never write) is refused by receive-pack's
// object checks, and nothing of it is stored or reported.
func TestMalformedObjectsAreRefused(t *testing.T) {
	h := newHarness(t, Options{})
	work := h.workRepo()
	h.commit(work, "service.yaml", "kind: Service\n")
	tree := h.git(work, "rev-parse", "HEAD^{tree}")
	bad := filepath.Join(t.TempDir(), "commit")
	content := "tree " + tree + "\nauthor no e-mail 1700000000 +0000\ncommitter knit test <test@knit.invalid> 1700000000 +0000\n\nmalformed\n"
	if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sha := h.git(work, "hash-object", "--literally", "-t", "commit", "-w", bad)
	h.git(work, "update-ref", "refs/heads/main", sha)
	out, err := h.run(work, "push", h.url("app"), "main")
	if err == nil {
		t.Fatalf("the push of a malformed commit succeeded:\n%s", out)
	}
	if !strings.Contains(out, "fsck") && !strings.Contains(out, "Email") {
		t.Errorf("the refusal does not say the object is malformed:\n%s", out)
	}
	h.noPush(300 * time.Millisecond)
	if ok, _ := isDir(filepath.Join(h.srv.opts.Root, "app.git")); ok {
		t.Error("the refused push left its repository behind")
	}
}
