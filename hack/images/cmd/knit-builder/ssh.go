package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// The fetch step's environment for an SSH repository, filled from the
// copy of the repository's Secret beside the Job: the deploy key, its
// passphrase (if any) and the server's host keys, which are required.
const (
	envSSHIdentity   = "GIT_SSH_IDENTITY"
	envSSHPassword   = "GIT_SSH_PASSWORD"
	envSSHKnownHosts = "GIT_SSH_KNOWN_HOSTS"
)

// sshCommand is git's GIT_SSH when the fetch is over SSH: git runs
// `knit-builder [-o …] [-p port] [user@]host command` with the variant
// "ssh". The toolchain image has no OpenSSH client; this one
// authenticates with the deploy key from the environment only after the
// server's host key matched known_hosts, pipes the command's stdin and
// stdout (git's pack protocol) and exits with its status. The key never
// touches the disk or a command line.
func sshCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	target, port, command, err := parseSSHArgs(args)
	if err == nil {
		err = runSSH(target, port, command, os.Getenv("GIT_PROTOCOL"), stdin, stdout, stderr)
	}
	var exit *ssh.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitStatus()
	case err != nil:
		fmt.Fprintln(stderr, "knit-builder ssh:", err)
		return 255
	}
	return 0
}

// parseSSHArgs reads the arguments git gives an "ssh" variant: options
// (-o value, -p port, -4, -6), the [user@]host, and the remote command.
func parseSSHArgs(args []string) (target, port, command string, err error) {
	port = "22"
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-4" || a == "-6":
		case a == "-o" || a == "-p":
			if i+1 == len(args) {
				return "", "", "", fmt.Errorf("%s needs a value", a)
			}
			i++
			if a == "-p" {
				port = args[i]
			}
		case strings.HasPrefix(a, "-"):
			return "", "", "", fmt.Errorf("unexpected option %q", a)
		default:
			if i+1 == len(args) {
				return "", "", "", errors.New("no remote command")
			}
			return a, port, strings.Join(args[i+1:], " "), nil
		}
	}
	return "", "", "", errors.New("no host")
}

// runSSH runs command on target's port as git's transport.
func runSSH(target, port, command, protocol string, stdin io.Reader, stdout, stderr io.Writer) error {
	user, host, ok := strings.Cut(target, "@")
	if !ok {
		user, host = "git", target
	}
	cfg, err := sshConfig(user)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(strings.Trim(host, "[]"), port)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", addr, err)
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		return fmt.Errorf("ssh to %s: %w", addr, err)
	}
	client := ssh.NewClient(c, chans, reqs)
	defer client.Close()
	session, err := client.NewSession()
	if err != nil {
		return fmt.Errorf("ssh session with %s: %w", addr, err)
	}
	defer session.Close()
	if protocol != "" {
		// Servers that do not accept it answer protocol v0, which the
		// fetch step falls back to.
		_ = session.Setenv("GIT_PROTOCOL", protocol)
	}
	session.Stdin, session.Stdout, session.Stderr = stdin, stdout, stderr
	return session.Run(command)
}

// sshConfig authenticates as user with the deploy key, and accepts only
// a host key known_hosts lists for the address, asking the server for
// the key types it lists.
func sshConfig(user string) (*ssh.ClientConfig, error) {
	identity, knownHosts := os.Getenv(envSSHIdentity), os.Getenv(envSSHKnownHosts)
	if identity == "" || knownHosts == "" {
		return nil, fmt.Errorf("an ssh fetch needs $%s and $%s", envSSHIdentity, envSSHKnownHosts)
	}
	var signer ssh.Signer
	var err error
	if pass := os.Getenv(envSSHPassword); pass != "" {
		signer, err = ssh.ParsePrivateKeyWithPassphrase([]byte(identity), []byte(pass))
	} else {
		signer, err = ssh.ParsePrivateKey([]byte(identity))
	}
	if err != nil {
		return nil, fmt.Errorf("the deploy key: %w", err)
	}
	check, algorithms, err := hostKeyCheck([]byte(knownHosts))
	if err != nil {
		return nil, err
	}
	return &ssh.ClientConfig{
		User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: check, HostKeyAlgorithms: algorithms, Timeout: 30 * time.Second,
	}, nil
}

// hostKeyCheck reads known_hosts content with x/crypto's own parser,
// through a file of it in the step's temporary directory (knownhosts
// reads files), and lists the key types it holds.
func hostKeyCheck(content []byte) (ssh.HostKeyCallback, []string, error) {
	var algorithms []string
	for rest := content; len(rest) > 0; {
		_, _, key, _, next, err := ssh.ParseKnownHosts(rest)
		if err != nil {
			break
		}
		algorithms = appendAlgorithms(algorithms, key.Type())
		rest = next
	}
	f, err := os.CreateTemp("", "known_hosts")
	if err != nil {
		return nil, nil, fmt.Errorf("known_hosts: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := io.Copy(f, bytes.NewReader(content)); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("known_hosts: %w", err)
	}
	f.Close()
	check, err := knownhosts.New(f.Name())
	if err != nil {
		return nil, nil, fmt.Errorf("known_hosts: %w", err)
	}
	return check, algorithms, nil
}

// appendAlgorithms adds the host key algorithms a key type is offered
// under: an RSA key signs with SHA-2 too.
func appendAlgorithms(algorithms []string, keyType string) []string {
	names := []string{keyType}
	if keyType == ssh.KeyAlgoRSA {
		names = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	for _, n := range names {
		if !slices.Contains(algorithms, n) {
			algorithms = append(algorithms, n)
		}
	}
	return algorithms
}
