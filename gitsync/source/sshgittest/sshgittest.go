// Package sshgittest is an SSH Git server for tests, as a forge runs
// one: git-upload-pack over an SSH session for the one key it authorizes,
// with a host key of its own, on loopback.
package sshgittest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Server serves the repositories under root over SSH as a forge
// does: git-upload-pack for a key it authorizes. It counts the
// authentication attempts it sees.
type Server struct {
	Addr     string
	HostKey  ssh.PublicKey
	Attempts atomic.Int32
}

// New starts a server for the repositories under root on loopback,
// closed with the test, that lets authorized in.
func New(t testing.TB, root string, authorized ssh.PublicKey) *Server {
	t.Helper()
	return NewOn(t, "127.0.0.1:0", root, authorized)
}

// NewOn is New listening on addr: a test cluster's pods reach the host
// only on the host's end of their network.
func NewOn(t testing.TB, addr, root string, authorized ssh.PublicKey) *Server {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{HostKey: host.PublicKey()}
	cfg := &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		s.Attempts.Add(1)
		if ssh.FingerprintSHA256(key) != ssh.FingerprintSHA256(authorized) {
			return nil, io.EOF
		}
		return &ssh.Permissions{}, nil
	}}
	cfg.AddHostKey(host)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s.Addr = l.Addr().String()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.serve(c, cfg, root)
		}
	}()
	return s
}

func (s *Server) serve(c net.Conn, cfg *ssh.ServerConfig, root string) {
	defer c.Close()
	_, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		go func() {
			defer ch.Close()
			for req := range chReqs {
				if req.Type != "exec" || len(req.Payload) < 4 {
					req.Reply(false, nil)
					continue
				}
				command := string(req.Payload[4:])
				service, arg, _ := strings.Cut(command, " ")
				if service != "git-upload-pack" {
					req.Reply(false, nil)
					continue
				}
				req.Reply(true, nil)
				cmd := exec.Command("git", "upload-pack", filepath.Join(root, strings.Trim(arg, "'\"")))
				cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
				code := uint32(0)
				if err := cmd.Run(); err != nil {
					code = 1
				}
				status := make([]byte, 4)
				binary.BigEndian.PutUint32(status, code)
				ch.SendRequest("exit-status", false, status)
				return
			}
		}()
	}
}

// KnownHosts is the server's known_hosts line.
func (s *Server) KnownHosts() string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey) + "\n"
}

// NewKey makes a deploy key: its private half as a Secret's identity
// holds it (OpenSSH PEM) and its public half.
func NewKey(t testing.TB) (identity []byte, public ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "deploy key")
	if err != nil {
		t.Fatal(err)
	}
	if public, err = ssh.NewPublicKey(pub); err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block), public
}
