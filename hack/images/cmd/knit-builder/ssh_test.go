package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// TestMain lets the test binary be git's SSH client as knit-builder is
// (gitEnv points GIT_SSH at the running executable).
func TestMain(m *testing.M) {
	if os.Getenv(envSSHClient) == "1" {
		os.Exit(sshCommand(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// gitSSHServer serves git-upload-pack over SSH on loopback to one key,
// as a forge does, and counts the keys offered to it.
type gitSSHServer struct {
	addr    string
	hostKey ssh.PublicKey
	offered atomic.Int32
}

func newGitSSHServer(t *testing.T, authorized ssh.PublicKey) *gitSSHServer {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	s := &gitSSHServer{hostKey: host.PublicKey()}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		s.offered.Add(1)
		if string(key.Marshal()) != string(authorized.Marshal()) {
			return nil, os.ErrPermission
		}
		return &ssh.Permissions{}, nil
	}}
	cfg.AddHostKey(host)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s.addr = l.Addr().String()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveUploadPack(c, cfg)
		}
	}()
	return s
}

// serveUploadPack runs the one exec request of a session, which must be
// git-upload-pack '<path>', and reports its exit status.
func serveUploadPack(c net.Conn, cfg *ssh.ServerConfig) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		for req := range chReqs {
			command := ""
			if req.Type == "exec" && len(req.Payload) > 4 {
				command = string(req.Payload[4:])
			}
			path, ok := strings.CutPrefix(command, "git-upload-pack ")
			if !ok {
				req.Reply(req.Type == "env", nil)
				continue
			}
			req.Reply(true, nil)
			cmd := exec.Command("git", "upload-pack", strings.Trim(path, "'"))
			cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
			status := make([]byte, 4)
			if cmd.Run() != nil {
				binary.BigEndian.PutUint32(status, 1)
			}
			ch.SendRequest("exit-status", false, status)
			ch.Close()
			break
		}
	}
}

func deployKey(t *testing.T) (string, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "deploy key")
	if err != nil {
		t.Fatal(err)
	}
	public, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block)), public
}

// TestFetchOverSSHWithTheDeployKey: the fetch step checks out the commit
// of an ssh:// repository with the deploy key from its environment, once
// the server's host key matched known_hosts, and a server whose key is
// not listed is refused before the deploy key is offered.
func TestFetchOverSSHWithTheDeployKey(t *testing.T) {
	src, sha := repo(t, "hello over ssh")
	identity, public := deployKey(t)
	srv := newGitSSHServer(t, public)
	url := "ssh://git@" + srv.addr + src
	t.Setenv(envSSHIdentity, identity)

	t.Run("known host: fetched", func(t *testing.T) {
		t.Setenv(envSSHKnownHosts, knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, srv.hostKey)+"\n")
		o := testOptions(t, url, sha, "unused.example")
		o.step = stepFetch
		var log strings.Builder
		if res := build(t.Context(), o, &log); res.Error != "" {
			t.Fatalf("fetch over ssh failed: %s\n%s", res.Error, log.String())
		}
		b, err := os.ReadFile(filepath.Join(o.workspace, "src", "cmd", "hello", "main.go"))
		if err != nil || !strings.Contains(string(b), "hello over ssh") {
			t.Errorf("checked out main.go = %q, %v; want the commit's", b, err)
		}
	})

	t.Run("unknown host key: refused before the key is offered", func(t *testing.T) {
		_, other, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		otherSigner, err := ssh.NewSignerFromKey(other)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv(envSSHKnownHosts, knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, otherSigner.PublicKey())+"\n")
		before := srv.offered.Load()
		o := testOptions(t, url, sha, "unused.example")
		o.step = stepFetch
		var log strings.Builder
		res := build(t.Context(), o, &log)
		if res.Error == "" || !strings.Contains(log.String(), "key mismatch") {
			t.Errorf("fetch from a server with an unknown host key: %q\n%s\nwant it refused for the key mismatch", res.Error, log.String())
		}
		if n := srv.offered.Load() - before; n != 0 {
			t.Errorf("the deploy key was offered %d times to a server known_hosts does not list", n)
		}
	})
}

func TestParseSSHArgs(t *testing.T) {
	tests := []struct {
		args                  []string
		target, port, command string
		wantErr               bool
	}{
		{args: []string{"git@example.com", "git-upload-pack '/org/repo.git'"}, target: "git@example.com", port: "22", command: "git-upload-pack '/org/repo.git'"},
		{args: []string{"-o", "SendEnv=GIT_PROTOCOL", "-p", "2222", "-4", "example.com", "git-upload-pack", "'/r'"}, target: "example.com", port: "2222", command: "git-upload-pack '/r'"},
		{args: []string{"-p"}, wantErr: true},
		{args: []string{"example.com"}, wantErr: true},
		{args: []string{"-oProxyCommand=sh", "example.com", "x"}, wantErr: true},
		{args: nil, wantErr: true},
	}
	for _, tt := range tests {
		target, port, command, err := parseSSHArgs(tt.args)
		if (err != nil) != tt.wantErr || target != tt.target || port != tt.port || command != tt.command {
			t.Errorf("parseSSHArgs(%q) = %q %q %q %v", tt.args, target, port, command, err)
		}
	}
}

// TestGitRunsTheSSHClientWithoutAShell: git runs GIT_SSH_COMMAND with
// /bin/sh, which the toolchain image lacks; GIT_SSH it runs directly.
func TestGitRunsTheSSHClientWithoutAShell(t *testing.T) {
	t.Setenv(envSSHIdentity, "key")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Join(gitEnv(), "\n")
	if strings.Contains(env, "GIT_SSH_COMMAND=") || !strings.Contains(env, "GIT_SSH="+self+"\n") {
		t.Errorf("git's environment:\n%s\nwant GIT_SSH naming this executable, no GIT_SSH_COMMAND", env)
	}
}
