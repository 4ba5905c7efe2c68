package localca

import (
	"container/list"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"strings"
	"time"
)

// leafLifetime is how long a leaf is valid. Leaves live in memory only and
// are reissued long before they end (see fresh), so this need not be long;
// short, it keeps any one leaf's key worth little.
const leafLifetime = 30 * 24 * time.Hour

// defaultMaxCached bounds the leaves a CA keeps. Server names come from
// the network, and a client could send endless distinct ones under
// .localhost; beyond the bound the least recently used leaf is dropped
// (and reissued should its name come back).
const defaultMaxCached = 1000

// ipKey is the cache key of the leaf for clients that send no server name,
// having connected to an address: it names 127.0.0.1 and ::1.
const ipKey = ""

// served says which names this CA issues for, in every refusal.
const served = `localhost and names under .localhost (e.g. hello.default.localhost), ` +
	`and 127.0.0.1 and ::1 for clients that send no server name`

// entry is one name's leaf, or its issuance in progress.
type entry struct {
	key  string
	done chan struct{} // closed once cert or err is set
	cert *tls.Certificate
	err  error
	elem *list.Element // in ca.lru
}

// GetCertificate is a tls.Config.GetCertificate that issues a leaf for the
// name the client asks for, so that each Service's new host name has a
// certificate the moment a client first connects to it. It serves
// "localhost" and any name under ".localhost" (any case, a trailing dot
// allowed), and, when the client sends no server name (it dialed an
// address), a leaf for 127.0.0.1 and ::1. Any other name is an error
// saying which names are served, which fails the handshake: this CA never
// issues for a real domain, and verifiers would reject it if it did.
//
// Leaves are cached in memory, one issuance per name however many
// handshakes ask for it at once, and reissued when less than a third of
// their lifetime remains.
func (ca *CA) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	var serverName string
	if hello != nil {
		serverName = hello.ServerName
	}
	key, err := cacheKey(serverName)
	if err != nil {
		return nil, err
	}

	ca.mu.Lock()
	if e := ca.cache[key]; e != nil {
		select {
		case <-e.done:
			if ca.fresh(e.cert.Leaf) {
				ca.touch(e)
				ca.mu.Unlock()
				return e.cert, nil
			}
			ca.remove(e) // and issue anew below
		default:
			// Another handshake is issuing this name's leaf: wait for it.
			ca.mu.Unlock()
			var cancel <-chan struct{}
			if hello != nil && hello.Context() != nil {
				cancel = hello.Context().Done()
			}
			select {
			case <-e.done:
				return e.cert, e.err
			case <-cancel:
				return nil, hello.Context().Err()
			}
		}
	}
	e := &entry{key: key, done: make(chan struct{})}
	ca.add(e)
	ca.mu.Unlock()

	e.cert, e.err = ca.issue(key)
	if e.err != nil {
		// Hand the error to those waiting, but let the next handshake
		// try again.
		ca.mu.Lock()
		if ca.cache[key] == e {
			ca.remove(e)
		}
		ca.mu.Unlock()
	}
	close(e.done)
	return e.cert, e.err
}

// cacheKey is the normalized name a leaf is issued and cached for, ipKey
// for the address leaf, or the refusal of a name this CA does not serve.
func cacheKey(serverName string) (string, error) {
	name := strings.ToLower(strings.TrimSuffix(serverName, "."))
	if name == "" {
		return ipKey, nil
	}
	// Clients should not send an address as the server name (RFC 6066),
	// but a few do; the address leaf is the answer for loopback ones.
	if ip := net.ParseIP(name); ip != nil && ip.IsLoopback() {
		return ipKey, nil
	}
	if name != "localhost" && !strings.HasSuffix(name, ".localhost") {
		return "", fmt.Errorf("localca: no certificate for server name %q: this CA serves only %s", serverName, served)
	}
	if !validHostname(name) {
		return "", fmt.Errorf("localca: no certificate for server name %q: not a valid host name; this CA serves only %s", serverName, served)
	}
	return name, nil
}

// validHostname says whether name, lower-cased, is a host name a leaf can
// be issued for: dot-separated labels of letters, digits, '-' and '_', 1
// to 63 characters each, 253 in all. No wildcards.
func validHostname(name string) bool {
	if len(name) > 253 {
		return false
	}
	for label := range strings.SplitSeq(name, ".") {
		if len(label) == 0 || len(label) > 63 {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// fresh says whether a cached leaf is still worth serving: begun, and with
// more than a third of its lifetime left, so it is replaced well before
// any client could see it expire.
func (ca *CA) fresh(leaf *x509.Certificate) bool {
	now := ca.now()
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	return !now.Before(leaf.NotBefore) && now.Before(leaf.NotAfter.Add(-lifetime/3))
}

// add caches e as the most recently used entry, dropping the least
// recently used beyond the bound. Called with ca.mu held.
func (ca *CA) add(e *entry) {
	ca.cache[e.key] = e
	e.elem = ca.lru.PushFront(e)
	for len(ca.cache) > max(ca.maxCached, 1) {
		ca.remove(ca.lru.Back().Value.(*entry))
	}
}

// touch marks e most recently used. Called with ca.mu held.
func (ca *CA) touch(e *entry) { ca.lru.MoveToFront(e.elem) }

// remove drops e from the cache. Called with ca.mu held.
func (ca *CA) remove(e *entry) {
	delete(ca.cache, e.key)
	ca.lru.Remove(e.elem)
}

// issue makes a leaf for key: a fresh P-256 key, server authentication
// only, valid from a minute ago for leafLifetime (never past the CA).
func (ca *CA) issue(key string) (*tls.Certificate, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	now := ca.now()
	notAfter := now.Add(leafLifetime)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	if !notAfter.After(now) {
		return nil, fmt.Errorf("localca: the CA in %s has expired; remove it and its key to make a new one", ca.certPath)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"knit dev"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	if key == ipKey {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	} else {
		tmpl.DNSNames = []string{key}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &priv.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("localca: issuing for %q: %w", key, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	ca.issued.Add(1)
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv, Leaf: leaf}, nil
}
