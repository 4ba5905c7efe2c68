package gitserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// repoState is what the server keeps per repository.
type repoState struct {
	// lock is held while a receive-pack creates the repository and runs,
	// so that the refs read around it are its own.
	lock sync.Mutex
	// pending and delivering are the OnPush queue; guarded by Server.mu.
	pending    []Push
	delivering bool
}

func (s *Server) state(name string) *repoState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.repos[name]
	if !ok {
		st = &repoState{}
		s.repos[name] = st
	}
	return st
}

func (s *Server) repoDir(name string) string { return filepath.Join(s.opts.Root, name+".git") }

func isDir(dir string) (bool, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// create makes the bare repository of name unless it exists, and
// reports whether it did; the caller holds the repository's lock. It
// inits into a temporary directory and renames it into place, so a
// repository directory is never half made.
func (s *Server) create(ctx context.Context, name string) (bool, error) {
	dir := s.repoDir(name)
	if ok, err := isDir(dir); err != nil || ok {
		return false, err
	}
	tmp, err := os.MkdirTemp(s.opts.Root, ".init-"+name+"-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if _, err := s.git(ctx, "init", "--quiet", "--bare", "--initial-branch=main", tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return false, err
	}
	s.opts.Log.Info("Created repository", "repo", name, "dir", dir)
	return true, nil
}

// refs reads every ref of a repository (not HEAD) with its object.
func (s *Server) refs(ctx context.Context, dir string) (map[string]string, error) {
	out, err := s.git(ctx, "--git-dir="+dir, "for-each-ref", "--format=%(objectname) %(refname)")
	if err != nil {
		return nil, err
	}
	refs := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		sha, ref, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			return nil, fmt.Errorf("git for-each-ref: unexpected line %q", sc.Text())
		}
		refs[ref] = sha
	}
	return refs, sc.Err()
}

// git runs a git command (an argument vector, never a shell) with the
// server's environment and returns its standard output.
func (s *Server) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, s.opts.Git, args...)
	cmd.Env = s.env
	cmd.Dir = s.opts.Root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// gitEnv is the whole environment of every git the server runs: nothing
// is inherited but PATH, no system or global configuration is read, and
// the settings http-backend needs come as GIT_CONFIG_* variables.
func gitEnv(root string) []string {
	config := [][2]string{
		{"http.receivepack", "true"},
		// Check every object a push brings (receive-pack's fsck) and refuse
		// the push if one is malformed: knit renders and builds from these
		// objects, and git's own fetch and clone of them would fail later.
		{"receive.fsckObjects", "true"},
		// Keep an automatic gc inside the receive-pack request (and so
		// inside the repository lock) instead of detached behind it.
		{"gc.autoDetach", "false"},
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_PROJECT_ROOT=" + root,
		"GIT_HTTP_EXPORT_ALL=1",
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(config)),
	}
	for i, kv := range config {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}
