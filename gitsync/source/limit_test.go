package source

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// A fetch whose commits weigh more than MaxFetchBytes is cut off while the
// pack streams in (the server sends far less than the blob), keeps
// nothing (no pack, no temporary file, the branch and the shallow
// commits as they were), says which limit and how to raise it, and is not
// downloaded again for the same commits; a higher limit fetches them.
// Over HTTP, as knit fetches, and from a local directory (tests), where
// go-git runs git upload-pack and must not wait for it forever.
func TestFetchOverTheLimit(t *testing.T) {
	const blob, limit = 48 << 20, 1 << 20
	for _, transport := range []string{"http", "local directory"} {
		t.Run(transport, func(t *testing.T) {
			dir, git := gitRepo(t)
			writeFile(t, dir, "service.yaml", "kind: Service\n")
			git("add", ".")
			git("commit", "-qm", "small")
			small := git("rev-parse", "HEAD")
			srv := serveRepo(t, dir)
			url, policy := srv.URL, srv.Policy
			if transport != "http" {
				url, policy = dir, localDirs
			}
			c := &Cache{Dir: t.TempDir(), Egress: policy, MaxFetchBytes: limit, LimitHint: "raise it with --git-max-fetch-size"}
			ctx := context.Background()
			if _, err := c.Fetch(ctx, "default/app", url, []string{"main"}, nil); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, c, "default/app")

			randomFile(t, dir, "model.bin", blob, 1)
			git("add", ".")
			git("commit", "-qm", "big")
			_, err := c.Fetch(ctx, "default/app", url, []string{"main"}, nil)
			var tooLarge *TooLargeError
			if !errors.As(err, &tooLarge) {
				t.Fatalf("fetch of a %d-byte blob under a %d-byte limit: err = %v, want a *TooLargeError", blob, limit, err)
			}
			t.Logf("refused: %v", err)
			for _, want := range []string{url, "1 MiB", "raise it with --git-max-fetch-size"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q: %v", want, err)
				}
			}
			sent, posts := srv.counts()
			if transport == "http" {
				t.Logf("the server sent %d bytes of the ~%d-byte pack before the fetch stopped", sent, blob)
				if sent > blob/2 {
					t.Errorf("the server sent %d bytes of a %d-byte pack: the fetch was not stopped while it streamed", sent, blob)
				}
			}
			if after := snapshot(t, c, "default/app"); !slices.Equal(after, before) {
				t.Errorf("the refused fetch left something behind:\nbefore %q\nafter  %q", before, after)
			}
			if _, err := c.Commit("default/app", small); err != nil {
				t.Errorf("the commit fetched before is gone: %v", err)
			}

			if _, err := c.Fetch(ctx, "default/app", url, []string{"main"}, nil); !errors.As(err, &tooLarge) {
				t.Fatalf("second fetch of the same commits: err = %v, want the same refusal", err)
			}
			if _, again := srv.counts(); again != posts {
				t.Errorf("the same too-large commits were asked for again (%d upload-pack requests, then %d)", posts, again)
			}

			c.MaxFetchBytes = 2 * blob
			got, err := c.Fetch(ctx, "default/app", url, []string{"main"}, nil)
			if err != nil {
				t.Fatalf("fetch under a higher limit: %v", err)
			}
			if _, err := c.Commit("default/app", got.Heads["main"]); err != nil {
				t.Errorf("the big commit is not readable after a fetch under a higher limit: %v", err)
			}
		})
	}
}

// snapshot lists the files of a cache repository that a fetch may write,
// with the content of the small ones (refs, shallow).
func snapshot(t *testing.T, c *Cache, key string) []string {
	t.Helper()
	root := c.path(key)
	var out []string
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		entry := rel
		if strings.HasPrefix(rel, "refs") || rel == "shallow" {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			entry += "=" + strings.TrimSpace(string(b))
		}
		out = append(out, entry)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRefusalMatches(t *testing.T) {
	a, b := plumbing.NewHash("aa"), plumbing.NewHash("bb")
	refused := errors.New("too large")
	f := &refusal{wants: []plumbing.Hash{a, b}, limit: 10, err: refused}
	tests := []struct {
		name  string
		f     *refusal
		wants []plumbing.Hash
		limit int64
		want  error
	}{
		{"none refused", nil, []plumbing.Hash{a}, 10, nil},
		{"the same commits", f, []plumbing.Hash{b, a}, 10, refused},
		{"another limit", f, []plumbing.Hash{a, b}, 20, nil},
		{"fewer commits", f, []plumbing.Hash{a}, 10, nil},
		{"other commits", f, []plumbing.Hash{a, plumbing.NewHash("cc")}, 10, nil},
	}
	for _, tc := range tests {
		if got := tc.f.matches(tc.wants, tc.limit); got != tc.want {
			t.Errorf("%s: matches = %v, want %v", tc.name, got, tc.want)
		}
	}
}
