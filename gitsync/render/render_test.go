package render

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the @want section of the golden fixtures in testdata")

// fixture is one testdata/*.txtar file: the files of a commit, the
// directory to render and what rendering must give.
//
//	-- path/in/repo --       a file of the commit
//	-- link -> target --     a symlink of the commit
//	-- @dir --               the directory to render (default: the root)
//	-- @want --              the objects, as YAML documents
//	-- @error --             substrings the error must contain, one a line;
//	                         the error must match ErrInvalid
type fixture struct {
	files    map[string]string
	symlinks map[string]string
	dir      string
	want     string
	hasWant  bool
	errs     []string
	sections []section // in order, to rewrite the file
}

type section struct{ header, body string }

func parseFixture(t *testing.T, data string) fixture {
	t.Helper()
	f := fixture{files: map[string]string{}, symlinks: map[string]string{}}
	var cur *section
	for _, line := range strings.SplitAfter(data, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") {
			f.sections = append(f.sections, section{header: strings.TrimSuffix(strings.TrimPrefix(trimmed, "-- "), " --")})
			cur = &f.sections[len(f.sections)-1]
			continue
		}
		if cur == nil {
			continue // the description
		}
		cur.body += line
	}
	for _, s := range f.sections {
		switch {
		case s.header == "@dir":
			f.dir = strings.TrimSpace(s.body)
		case s.header == "@want":
			f.want, f.hasWant = s.body, true
		case s.header == "@error":
			for _, l := range strings.Split(strings.TrimSpace(s.body), "\n") {
				f.errs = append(f.errs, strings.TrimSpace(l))
			}
		case strings.Contains(s.header, " -> "):
			name, target, _ := strings.Cut(s.header, " -> ")
			f.symlinks[name] = target
		default:
			f.files[s.header] = s.body
		}
	}
	return f
}

// commitTree makes a real repository in a temp dir with the git CLI
// (so that symlinks are stored exactly as written), commits the files and
// symlinks, and returns the commit's tree as go-git reads it.
func commitTree(t *testing.T, files, symlinks map[string]string) *object.Tree {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range symlinks {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "--initial-branch=main"},
		{"add", "-A"},
		{"-c", "user.name=knit test", "-c", "user.email=test@knit.invalid", "commit", "-q", "--allow-empty", "-m", "test"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func toYAML(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	var b bytes.Buffer
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(y)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			f := parseFixture(t, string(data))
			tree := commitTree(t, f.files, f.symlinks)
			objs, err := Render(tree, f.dir)
			if len(f.errs) > 0 {
				if err == nil {
					t.Fatalf("Render succeeded, want an error containing %q; got:\n%s", f.errs, toYAML(t, objs))
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("error %q does not match ErrInvalid", err)
				}
				for _, want := range f.errs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got := toYAML(t, objs)
			if *update {
				rewrite(t, p, data, f, got)
				return
			}
			if !f.hasWant {
				t.Fatalf("fixture has neither @want nor @error; run with -update")
			}
			if diff := cmp.Diff(f.want, got); diff != "" {
				t.Errorf("rendered objects differ (-want +got):\n%s", diff)
			}
		})
	}
}

// rewrite replaces (or appends) the @want section of a fixture.
func rewrite(t *testing.T, p string, data []byte, f fixture, got string) {
	t.Helper()
	head := string(data)
	if i := strings.Index(head, "\n-- "); i >= 0 {
		head = head[:i+1]
	} else if strings.HasPrefix(head, "-- ") {
		head = ""
	}
	var b strings.Builder
	b.WriteString(head)
	for _, s := range f.sections {
		if s.header == "@want" {
			continue
		}
		b.WriteString("-- " + s.header + " --\n" + s.body)
	}
	b.WriteString("-- @want --\n" + got)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
