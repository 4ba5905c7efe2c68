package source

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/knitops/knit/gitsync/egress"
)

// Secret keys an SSH repository's secretRef holds, as Flux spells them.
const (
	SecretIdentity   = "identity"    // the private key (PEM or OpenSSH)
	SecretKnownHosts = "known_hosts" // the server's host keys; required
	// SecretPassword decrypts an identity that has a passphrase.
)

// scpLike matches Git's scp-like syntax, [user@]host:path, which has no
// scheme and whose host has no slash before the colon.
var scpLike = regexp.MustCompile(`^(?:([^@/:]+)@)?([^@/:\[\]]+|\[[0-9a-fA-F:.]+\]):([^/].*|/.*)?$`)

// IsSSH reports whether a repository URL is fetched over SSH: ssh:// or
// Git's scp-like user@host:path.
func IsSSH(raw string) bool {
	if strings.HasPrefix(strings.ToLower(raw), "ssh://") {
		return true
	}
	return !strings.Contains(raw, "://") && scpLike.MatchString(raw)
}

// SSHURL spells an SSH repository URL as ssh://, for the checks that
// parse URLs; other URLs are returned as they are.
func SSHURL(raw string) string {
	if strings.Contains(raw, "://") {
		return raw
	}
	m := scpLike.FindStringSubmatch(raw)
	if m == nil {
		return raw
	}
	user := ""
	if m[1] != "" {
		user = m[1] + "@"
	}
	return "ssh://" + user + m[2] + "/" + strings.TrimPrefix(m[3], "/")
}

// CarriesCredentials reports whether a repository URL holds a secret: a
// password in any URL, or a user name in an http(s) one (where it may be
// a token). An SSH URL's user (git@) is an account name, not a secret.
func CarriesCredentials(raw string) bool {
	if !IsSSH(raw) {
		return HasUserinfo(raw)
	}
	_, authority, _ := splitAuthority(SSHURL(raw))
	user, _, found := strings.Cut(authority, "@")
	return found && strings.Contains(user, ":")
}

// SSHAuthFromSecret is how a fetch of the SSH repository raw presents
// itself: the Secret's identity (decrypted with its password, if any),
// and a host-key check against its known_hosts, which is required: an
// SSH fetch that accepts any host key sends the key's signature to
// whoever answers. The connected address is checked against the egress
// policy before the host key is, so no authentication is attempted with
// a server the policy refuses.
func SSHAuthFromSecret(raw string, data map[string][]byte, policy *egress.Policy) (transport.AuthMethod, error) {
	if len(data[SecretIdentity]) == 0 {
		return nil, fmt.Errorf("an ssh repository needs the Secret's %s key: the private key of a deploy key (and %s)", SecretIdentity, SecretKnownHosts)
	}
	if len(data[SecretKnownHosts]) == 0 {
		return nil, fmt.Errorf("an ssh repository needs the Secret's %s key: the server's host keys (ssh-keyscan <host>), checked on every fetch", SecretKnownHosts)
	}
	user := "git"
	if _, authority, _ := splitAuthority(SSHURL(raw)); strings.Contains(authority, "@") {
		user, _, _ = strings.Cut(authority, "@")
	}
	keys, err := gitssh.NewPublicKeys(user, data[SecretIdentity], string(data[SecretPassword]))
	if err != nil {
		// x/crypto's parse errors say what is wrong with the key, not
		// what it holds.
		return nil, fmt.Errorf("the Secret's %s is not a private key knit can use: %w", SecretIdentity, err)
	}
	check, algorithms, err := knownHostsCheck(data[SecretKnownHosts])
	if err != nil {
		return nil, err
	}
	keys.HostKeyCallback = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		if err := checkRemote(policy, hostname, remote); err != nil {
			return err
		}
		if err := check(hostname, remote, key); err != nil {
			var ke *knownhosts.KeyError
			if errors.As(err, &ke) {
				return fmt.Errorf("the host key %s %s of %s is not in the Secret's %s: refusing to authenticate (a new server, or someone in between)",
					key.Type(), ssh.FingerprintSHA256(key), hostname, SecretKnownHosts)
			}
			return err
		}
		return nil
	}
	return &sshAuth{PublicKeys: keys, algorithms: algorithms}, nil
}

// sshAuth asks the server for the host key types known_hosts holds, so
// that a server with several keys presents one that can be checked.
type sshAuth struct {
	*gitssh.PublicKeys
	algorithms []string
}

func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	c, err := a.PublicKeys.ClientConfig()
	if err != nil {
		return nil, err
	}
	c.HostKeyAlgorithms = a.algorithms
	return c, nil
}

// knownHostsCheck reads known_hosts content with x/crypto's parser
// (hashed hosts, markers and patterns included) and lists the host key
// algorithms it holds.
func knownHostsCheck(content []byte) (ssh.HostKeyCallback, []string, error) {
	var algorithms []string
	for rest := content; len(rest) > 0; {
		_, _, key, _, next, err := ssh.ParseKnownHosts(rest)
		if err != nil {
			break // io.EOF at the end; a bad line is knownhosts.New's to report
		}
		algorithms = appendAlgorithms(algorithms, key.Type())
		rest = next
	}
	if len(algorithms) == 0 {
		return nil, nil, fmt.Errorf("the Secret's %s holds no host key", SecretKnownHosts)
	}
	f, err := os.CreateTemp("", "knit-known-hosts-")
	if err != nil {
		return nil, nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(content); err != nil {
		f.Close()
		return nil, nil, err
	}
	if err := f.Close(); err != nil {
		return nil, nil, err
	}
	check, err := knownhosts.New(f.Name())
	if err != nil {
		return nil, nil, fmt.Errorf("the Secret's %s: %w", SecretKnownHosts, err)
	}
	return check, algorithms, nil
}

func appendAlgorithms(have []string, keyType string) []string {
	types := []string{keyType}
	if keyType == ssh.KeyAlgoRSA { // the same key signs with SHA-2
		types = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	for _, t := range types {
		if !slices.Contains(have, t) {
			have = append(have, t)
		}
	}
	return have
}

// checkRemote applies the egress policy to the address an SSH connection
// reached.
func checkRemote(policy *egress.Policy, hostname string, remote net.Addr) error {
	if policy == nil {
		return nil
	}
	tcp, ok := remote.(*net.TCPAddr)
	if !ok {
		return fmt.Errorf("egress: an SSH connection to %s over %s", hostname, remote.Network())
	}
	host, _, err := net.SplitHostPort(hostname)
	if err != nil {
		host = hostname
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		host = "" // an address: no name to match rules on
	}
	return policy.CheckAddr(host, tcp.AddrPort())
}
