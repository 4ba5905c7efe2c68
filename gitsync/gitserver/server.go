package gitserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
)

// Server is an http.Handler serving the bare repositories under
// Options.Root over Git's smart HTTP protocol. Close it to stop OnPush
// calls.
type Server struct {
	opts  Options
	env   []string // of every git the server runs
	hosts []string // the Host header names it answers (allowedHosts)
	// emptyRefs is receive-pack's advertisement of an empty repository:
	// the answer to a push's first request for a repository not created
	// yet, which only the push itself creates.
	emptyRefs []byte

	ctx    context.Context // OnPush's; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // OnPush deliveries

	mu     sync.Mutex
	repos  map[string]*repoState
	closed bool
}

// New makes a Server; it creates Options.Root if needed.
func New(opts Options) (*Server, error) {
	if err := opts.Defaults(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Root, 0o755); err != nil {
		return nil, fmt.Errorf("git server: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:   opts,
		env:    gitEnv(opts.Root),
		hosts:  allowedHosts(opts.Hosts),
		ctx:    ctx,
		cancel: cancel,
		repos:  map[string]*repoState{},
	}
	var err error
	if s.emptyRefs, err = s.advertiseEmpty(ctx); err != nil {
		cancel()
		return nil, fmt.Errorf("git server: %w", err)
	}
	return s, nil
}

// Close cancels the context OnPush calls get, drops pushes not yet
// delivered, and waits for the OnPush calls running to return. Requests
// after Close are refused (503).
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, st := range s.repos {
		st.pending = nil
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// The smart HTTP endpoints, relative to a repository's URL.
const (
	infoRefs    = "info/refs"
	uploadPack  = "git-upload-pack"
	receivePack = "git-receive-pack"
)

// ServeHTTP routes a smart HTTP request to git http-backend.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.ctx.Err() != nil {
		http.Error(w, "the git server is shutting down", http.StatusServiceUnavailable)
		return
	}
	if !s.admit(w, r) {
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, s.opts.PathPrefix+"/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	name, endpoint, _ := strings.Cut(rest, "/")
	name = strings.TrimSuffix(name, ".git")
	if err := ValidateName(name); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	method, service := http.MethodPost, endpoint
	switch endpoint {
	case infoRefs:
		method, service = http.MethodGet, r.URL.Query().Get("service")
		if service != uploadPack && service != receivePack {
			http.Error(w, "only Git's smart HTTP protocol is served: info/refs needs ?service=git-upload-pack or ?service=git-receive-pack", http.StatusBadRequest)
			return
		}
	case uploadPack, receivePack:
	default:
		http.Error(w, fmt.Sprintf("%s is not a Git smart HTTP endpoint", r.URL.Path), http.StatusNotFound)
		return
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		http.Error(w, fmt.Sprintf("%s needs %s", r.URL.Path, method), http.StatusMethodNotAllowed)
		return
	}

	dir := s.repoDir(name)
	exists, err := isDir(dir)
	if err != nil {
		s.fail(w, name, "Cannot stat repository", err)
		return
	}
	switch {
	case exists:
	case endpoint == infoRefs && service == receivePack:
		// A push starts here; the repository is created by the push itself.
		s.serveEmptyRefs(w)
		return
	case endpoint != receivePack:
		http.Error(w, fmt.Sprintf("repository %q does not exist: push to it to create it", name), http.StatusNotFound)
		return
	}
	if endpoint == receivePack {
		s.receivePack(w, r, name, dir)
		return
	}
	s.backend(w, r, name, endpoint)
}

// receivePack runs a push under the repository's lock, creating the
// repository for the first one, and reports the refs it changed. A
// repository the push created but stored no ref in is removed again.
func (s *Server) receivePack(w http.ResponseWriter, r *http.Request, name, dir string) {
	st := s.state(name)
	st.lock.Lock()
	defer st.lock.Unlock()
	created, err := s.create(r.Context(), name)
	if err != nil {
		s.fail(w, name, "Cannot create repository", err)
		return
	}
	before, err := s.refs(r.Context(), dir)
	if err != nil {
		s.fail(w, name, "Cannot read refs before a push", err)
		return
	}
	s.backend(w, r, name, receivePack)
	// The client may be gone; what receive-pack did is done all the same.
	after, err := s.refs(context.WithoutCancel(r.Context()), dir)
	if err != nil {
		s.opts.Log.Error(err, "Cannot read refs after a push; not reporting it", "repo", name)
		return
	}
	if created && len(after) == 0 {
		s.opts.Log.Info("Push stored nothing; removing the repository it created", "repo", name)
		if err := os.RemoveAll(dir); err != nil {
			s.opts.Log.Error(err, "Cannot remove an empty repository", "repo", name)
		}
		return
	}
	updates := diffRefs(before, after)
	if len(updates) == 0 || s.opts.OnPush == nil {
		return
	}
	p := Push{Repo: name, Dir: dir, Updates: updates}
	if s.opts.WaitForOnPush {
		s.notify(p) // under the lock: in push order
		return
	}
	s.enqueue(st, p)
}

func (s *Server) fail(w http.ResponseWriter, name, msg string, err error) {
	s.opts.Log.Error(err, msg, "repo", name)
	http.Error(w, "internal error of the git server", http.StatusInternalServerError)
}
