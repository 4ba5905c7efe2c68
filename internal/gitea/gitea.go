// Package gitea starts a real Gitea forge for a test and drives it through
// its REST API, so that knit's pull-request journeys run against the forge
// a user has (repositories, git over HTTP, signed webhooks, pull requests,
// commit statuses and comments) instead of a fake that only knows what we
// already believe about forges.
//
// The binary is ./bin/gitea, built from source by `make gitea`
// (hack/gitea/build.sh). Each Start gets its own server: state in the
// test's temporary directory, sqlite, a free port on 127.0.0.1, stopped
// when the test ends.
package gitea

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knitops/knit/internal/moduleroot"
)

// Options are what a test may choose about its forge; the zero value is
// a working forge.
type Options struct {
	// Binary is the gitea executable; empty means bin/gitea under the
	// knit module's root (what `make gitea` links).
	Binary string
	// User is the admin that owns the repositories and the token;
	// default "knit".
	User string
	// ReadyTimeout bounds start → API answering; default 2 minutes (a
	// fresh server migrates its database first: 1–8 s here, more on a
	// loaded machine).
	ReadyTimeout time.Duration
	// SSH starts Gitea's built-in SSH server on loopback too (user git),
	// for tests of fetches with deploy keys: Server.SSHAddr and
	// Server.KnownHosts.
	SSH bool
}

// Server is one running Gitea. Its API helpers act as User with Token.
// The helpers of a journey's steps (CreateRepo, CreatePullRequest,
// MergePullRequest …) fail the test they belong to when Gitea refuses;
// that is the test given to Start, so a subtest must use With(t): Go's
// testing panics when a subtest fails its parent.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, without a trailing slash.
	URL string
	// User, Password and Token are the admin's credentials; the token has
	// every scope.
	User, Password, Token string
	// Dir holds the server's state: custom/conf/app.ini, data/, repos/, log/.
	Dir string
	// Version is what /api/v1/version answered.
	Version string
	// Ready is how long the server took from start to its API answering.
	Ready time.Duration
	// SSHAddr is the built-in SSH server's 127.0.0.1:PORT, with
	// Options.SSH.
	SSHAddr string

	t      testing.TB
	ssh    bool
	bin    string
	conf   string
	env    []string
	client *http.Client
}

// Start starts a Gitea for t and stops it when t ends. It fails t, with
// the end of Gitea's log, when the binary is missing or the server does
// not come up.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin := opts.Binary
	if bin == "" {
		root, err := moduleroot.Dir()
		if err != nil {
			t.Fatalf("gitea: locating bin/gitea: %v", err)
			return nil
		}
		bin = filepath.Join(root, "bin", "gitea")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("gitea: no Gitea binary at %s (%v): run `make gitea` (builds it from source once per machine: ~4 min on 2 idle cores)", bin, err)
		return nil
	}
	if opts.User == "" {
		opts.User = "knit"
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 2 * time.Minute
	}
	s := &Server{
		ssh:  opts.SSH,
		User: opts.User, Password: randomString(18), Dir: t.TempDir(), t: t, bin: bin,
		client: &http.Client{Timeout: 30 * time.Second},
	}
	s.conf = filepath.Join(s.Dir, "custom", "conf", "app.ini")
	for _, kv := range os.Environ() {
		// The machine's own Gitea settings (GITEA_WORK_DIR, GITEA_CUSTOM,
		// GITEA__section__KEY overrides) and git's (GIT_DIR and the like,
		// which the git processes Gitea runs would obey) must not leak
		// into a test forge.
		if !strings.HasPrefix(kv, "GITEA_") && !strings.HasPrefix(kv, "GIT_") {
			s.env = append(s.env, kv)
		}
	}

	// A free port can be taken between choosing and binding it; Gitea
	// then exits at once, and another port is tried.
	var err error
	for attempt := 1; ; attempt++ {
		var retry bool
		retry, err = s.start(opts.ReadyTimeout)
		if err == nil || !retry || attempt == 3 {
			break
		}
	}
	if err != nil {
		t.Fatalf("gitea: %v\n%s", err, s.logTail(40))
		return nil
	}
	began := time.Now()
	if err := s.createAdmin(); err != nil {
		t.Fatalf("gitea: %v\n%s", err, s.logTail(20))
		return nil
	}
	t.Logf("gitea %s at %s: API ready in %s, admin and token in %s (state in %s)", s.Version, s.URL,
		s.Ready.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), s.Dir)
	return s
}

// With is the same server with its step helpers failing t, for use in
// t's goroutine (a subtest of the test that started the server).
func (s *Server) With(t testing.TB) *Server {
	c := *s
	c.t = t
	return &c
}

// start writes app.ini for a fresh port, starts the server and waits for
// its API. retry says the server exited because its port was taken.
func (s *Server) start(timeout time.Duration) (retry bool, err error) {
	port, err := freePort()
	if err != nil {
		return false, err
	}
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	sshSection := "DISABLE_SSH = true\nSTART_SSH_SERVER = false"
	if s.ssh {
		sshPort, err := freePort()
		if err != nil {
			return false, err
		}
		s.SSHAddr = "127.0.0.1:" + strconv.Itoa(sshPort)
		// Gitea makes the host key on its first start; the user is git
		// whatever user Gitea runs as.
		sshSection = fmt.Sprintf("DISABLE_SSH = false\nSTART_SSH_SERVER = true\nSSH_DOMAIN = 127.0.0.1\nSSH_LISTEN_HOST = 127.0.0.1\n"+
			"SSH_PORT = %[1]d\nSSH_LISTEN_PORT = %[1]d\nBUILTIN_SSH_SERVER_USER = git\nSSH_SERVER_HOST_KEYS = ssh/gitea.ed25519", sshPort)
	}
	if err := s.writeConfig(port, sshSection); err != nil {
		return false, err
	}
	logDir := filepath.Join(s.Dir, "log")
	out, err := os.OpenFile(filepath.Join(logDir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, fmt.Errorf("gitea: opening its stdout log: %w", err)
	}
	defer out.Close() // the child has its own descriptor
	cmd := exec.Command(s.bin, "--work-path", s.Dir, "--config", s.conf, "web")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = s.Dir, s.env, out, out
	cmd.SysProcAttr = childSysProcAttr()
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("starting %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.t.Cleanup(func() { s.stop(cmd, exited) })

	deadline := time.Now().Add(timeout)
	var last string
	for {
		v, err := s.version()
		if err == nil {
			s.Version, s.Ready = v, time.Since(began)
			return false, nil
		}
		last = err.Error()
		select {
		case <-exited:
			taken := strings.Contains(s.logTail(20), "address already in use")
			return taken, fmt.Errorf("gitea exited before its API answered (%s)", cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return false, fmt.Errorf("gitea's API did not answer within %s: %s", timeout, last)
		}
	}
}

// version asks the API which Gitea answers, the readiness probe.
func (s *Server) version() (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	if err := s.API(http.MethodGet, "/version", nil, &v); err != nil {
		return "", err
	}
	return v.Version, nil
}

// stop ends the server: SIGTERM to its process group (Gitea and the git
// processes it runs), SIGKILL when it is still there after 10 s. Gitea's
// log tail goes to the test log when the test failed.
func (s *Server) stop(cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return // a start that failed; its log was shown then
	default:
	}
	began := time.Now()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
		s.t.Logf("gitea at %s stopped in %s", s.URL, time.Since(began).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		s.t.Logf("gitea at %s killed: still running 10 s after SIGTERM", s.URL)
	}
	if s.t.Failed() {
		s.t.Logf("gitea at %s, end of its log:\n%s", s.URL, s.logTail(30))
	}
}

// createAdmin creates the admin with Gitea's CLI (the API needs an admin
// to create one) and its token through the API, with basic auth.
func (s *Server) createAdmin() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.bin, "--work-path", s.Dir, "--config", s.conf,
		"admin", "user", "create", "--admin", "--username", s.User, "--password", s.Password,
		"--email", s.User+"@example.invalid", "--must-change-password=false")
	cmd.Dir, cmd.Env = s.Dir, s.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gitea admin user create %s: %w\n%s", s.User, err, out)
	}
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	in := map[string]any{"name": "knit-test", "scopes": []string{"all"}}
	if err := s.do(http.MethodPost, "/users/"+url.PathEscape(s.User)+"/tokens", in, &tok, func(r *http.Request) {
		r.SetBasicAuth(s.User, s.Password)
	}); err != nil {
		return fmt.Errorf("creating %s's API token: %w", s.User, err)
	}
	if tok.SHA1 == "" {
		return errors.New("creating the API token: Gitea answered no token")
	}
	s.Token = tok.SHA1
	return nil
}

// writeConfig writes app.ini: sqlite, loopback only, SSH only when asked,
// no mailer or
// update checks, webhooks allowed to loopback (where the tests listen) and
// delivered from an in-memory queue (Gitea's default on-disk queue adds
// up to 1.6 s per delivery), no UI assets needed.
func (s *Server) writeConfig(port int, sshSection string) error {
	for _, d := range []string{filepath.Dir(s.conf), "data", "repos", "log"} {
		if !filepath.IsAbs(d) {
			d = filepath.Join(s.Dir, d)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("gitea: %w", err)
		}
	}
	root := ""
	if os.Geteuid() == 0 {
		// Gitea refuses root unless told; CI machines run tests as root.
		root = "I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true"
	}
	jwt := make([]byte, 32)
	_, _ = rand.Read(jwt)
	ini := fmt.Sprintf(`APP_NAME = knit-test-forge
RUN_MODE = prod
WORK_PATH = %[1]s
%[3]s

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:%[2]d/
APP_DATA_PATH = %[1]s/data
%[7]s
LFS_START_SERVER = false
GRACEFUL_HAMMER_TIME = 5s

[database]
DB_TYPE = sqlite3
PATH = %[1]s/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = %[1]s/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %[4]s
INTERNAL_TOKEN = %[5]s
PASSWORD_HASH_ALGO = pbkdf2
; webhooks to 127.0.0.1 are refused unless allowed: hook creation still
; succeeds, deliveries fail, and only the server log says why
ALLOWED_HOST_LIST = loopback

[oauth2]
JWT_SECRET = %[6]s

[service]
DISABLE_REGISTRATION = true

[webhook]
DELIVER_TIMEOUT = 5

[mailer]
ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[queue]
TYPE = channel

[actions]
ENABLED = false

[cron.update_checker]
ENABLED = false

[log]
MODE = file
LEVEL = Info
ROOT_PATH = %[1]s/log
`, s.Dir, port, root, randomString(32), randomString(48), base64.RawURLEncoding.EncodeToString(jwt), sshSection)
	if err := os.WriteFile(s.conf, []byte(ini), 0o600); err != nil {
		return fmt.Errorf("gitea: writing app.ini: %w", err)
	}
	return nil
}

// logTail is the end of Gitea's own log and of its stdout and stderr,
// for failures that must explain themselves.
func (s *Server) logTail(lines int) string {
	var b strings.Builder
	for _, name := range []string{"stdout.log", "gitea.log"} {
		p := filepath.Join(s.Dir, "log", name)
		tail, err := tailFile(p, lines)
		if err != nil || tail == "" {
			continue
		}
		fmt.Fprintf(&b, "--- %s (last %d lines)\n%s", p, lines, tail)
	}
	if b.Len() == 0 {
		return "(gitea wrote no log)"
	}
	return b.String()
}

func tailFile(path string, n int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	if len(lines) == 0 {
		return "", nil
	}
	return strings.Join(lines, "\n") + "\n", nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("gitea: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// drain reads and closes a response body so its connection is reused.
func drain(r io.ReadCloser) {
	_, _ = io.Copy(io.Discard, r)
	_ = r.Close()
}
