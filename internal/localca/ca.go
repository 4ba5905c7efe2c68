package localca

import (
	"container/list"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// The CA's files in the directory given to Load. ca.pem is what users
// trust; ca-key.pem never leaves the directory.
const (
	certFile = "ca.pem"
	keyFile  = "ca-key.pem"
)

// caYears is how long a CA lasts: long enough that a user who trusted it
// once is not asked again, short enough to end one day on its own.
const caYears = 10

// clockSkew backdates every certificate's NotBefore, so a client whose
// clock runs a little behind still accepts one issued this instant.
const clockSkew = time.Minute

// CA is knit dev's local certificate authority: a name-constrained CA kept
// on disk (see the package comment) that issues ingress leaf certificates
// in memory, on demand, for the names clients ask for. A CA is safe for
// concurrent use.
type CA struct {
	certPath string
	cert     *x509.Certificate
	key      crypto.Signer

	// now is the clock leaves are issued and judged by; tests move it.
	now func() time.Time
	// maxCached bounds the leaves kept: the names come from the network.
	maxCached int
	// issued counts leaves made, so tests can tell issuance happened once.
	issued atomic.Uint64

	mu    sync.Mutex
	cache map[string]*entry
	lru   *list.List // of *entry, most recently used first
}

// errIncomplete marks a directory holding one of the CA's two files: what
// a concurrent Load sees for an instant while another publishes the pair.
var errIncomplete = errors.New("incomplete CA")

// Load returns the CA kept in dir, creating dir (0700) and the CA on first
// use: dir/ca.pem (0644), the certificate users trust, and dir/ca-key.pem
// (0600, PKCS#8), its key. Each file is written to a temporary name and
// then linked into place, so a crash never leaves half a key, and an
// existing file is never replaced, not even by a concurrent Load (the
// loser loads the winner's CA).
//
// A directory with only one of the two files, or with a key that is not
// the certificate's, is an error naming the files: making a new CA there
// would silently stop the one the user may have trusted from working, so
// that is left to the user, who can restore the file or remove both.
func Load(dir string) (*CA, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("localca: %w", err)
	}
	certPath, keyPath := filepath.Join(abs, certFile), filepath.Join(abs, keyFile)
	ca, err := loadPair(certPath, keyPath)
	if !errors.Is(err, fs.ErrNotExist) {
		return ca, err
	}
	won, err := create(abs, certPath, keyPath)
	if err != nil {
		return nil, err
	}
	if won {
		return loadPair(certPath, keyPath)
	}
	// Another Load published its key first; its certificate follows
	// within moments.
	for range 50 {
		ca, err = loadPair(certPath, keyPath)
		if !errors.Is(err, errIncomplete) {
			return ca, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, err
}

// CertPath is the absolute path of the CA certificate (PEM): the file
// users give curl --cacert or add to their system's trust store.
func (ca *CA) CertPath() string { return ca.certPath }

// Pool returns a new pool holding only this CA, for clients (tests, knit's
// own probes) that should trust the ingress and nothing else.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

// loadPair reads the CA from its two files. Neither existing is an error
// matching fs.ErrNotExist; one alone is errIncomplete.
func loadPair(certPath, keyPath string) (*CA, error) {
	certPEM, certErr := os.ReadFile(certPath)
	keyPEM, keyErr := os.ReadFile(keyPath)
	certMissing, keyMissing := errors.Is(certErr, fs.ErrNotExist), errors.Is(keyErr, fs.ErrNotExist)
	switch {
	case certMissing && keyMissing:
		return nil, certErr
	case certMissing != keyMissing:
		have, lack := certPath, keyPath
		if certMissing {
			have, lack = keyPath, certPath
		}
		return nil, fmt.Errorf("localca: %w: %s exists but %s does not; "+
			"not making a new CA over one you may have trusted: restore %s, "+
			"or remove %s to make a new CA (and trust it anew)",
			errIncomplete, have, lack, lack, have)
	case certErr != nil:
		return nil, fmt.Errorf("localca: %w", certErr)
	case keyErr != nil:
		return nil, fmt.Errorf("localca: %w", keyErr)
	}

	cert, err := parseCert(certPath, certPEM)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(keyPath, keyPEM)
	if err != nil {
		return nil, err
	}
	pub, ok := cert.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(key.Public()) {
		return nil, fmt.Errorf("localca: %s is not the key of %s: the two files do not match; "+
			"restore the matching pair, or remove both to make a new CA (and trust it anew)",
			keyPath, certPath)
	}
	if !cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		return nil, fmt.Errorf("localca: %s is not a CA certificate; remove it and %s to make a new CA", certPath, keyPath)
	}
	if now := time.Now(); now.After(cert.NotAfter) {
		return nil, fmt.Errorf("localca: the CA in %s expired on %s; remove it and %s to make a new CA (and trust it anew)",
			certPath, cert.NotAfter.Format(time.DateOnly), keyPath)
	}
	return &CA{
		certPath:  certPath,
		cert:      cert,
		key:       key,
		now:       time.Now,
		maxCached: defaultMaxCached,
		cache:     make(map[string]*entry),
		lru:       list.New(),
	}, nil
}

func parseCert(path string, data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("localca: %s holds no PEM CERTIFICATE", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("localca: %s: %w", path, err)
	}
	return cert, nil
}

func parseKey(path string, data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("localca: %s holds no PEM PRIVATE KEY (PKCS#8)", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("localca: %s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("localca: %s: a %T cannot sign", path, key)
	}
	return signer, nil
}

// create makes a new CA and publishes it in dir: the key first, then the
// certificate, each written and synced under a temporary name and then
// hard-linked into place, which fails rather than replace an existing
// file. won is false when another Load got there first; the files are
// then that Load's.
func create(dir, certPath, keyPath string) (won bool, err error) {
	certDER, keyDER, err := newCA(time.Now())
	if err != nil {
		return false, err
	}
	tmpKey, err := writeTemp(dir, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmpKey)
	tmpCert, err := writeTemp(dir, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}), 0o644)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmpCert)

	if err := publish(tmpKey, keyPath); errors.Is(err, fs.ErrExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("localca: %w", err)
	}
	if err := publish(tmpCert, certPath); err != nil {
		// Someone put a certificate there in the meantime: take back
		// the key just published, which cannot be its.
		os.Remove(keyPath)
		return false, fmt.Errorf("localca: %w", err)
	}
	syncDir(dir)
	return true, nil
}

// newCA makes a CA certificate and its key, both DER.
func newCA(now time.Time) (certDER, keyDER []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("localca: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			Organization: []string{"knit dev"},
			CommonName:   "knit dev local CA (" + userAtHost() + ")",
		},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.AddDate(caYears, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// It signs leaves only, never another CA.
		MaxPathLen:     0,
		MaxPathLenZero: true,
		// Its leaves serve TLS and nothing else (no client auth, no code
		// or mail signing): verifiers carry a CA's EKUs down the chain.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		// The point of it all: whatever this key signs, verifiers accept
		// it only for localhost, *.localhost and loopback addresses.
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         []string{"localhost"},
		PermittedIPRanges: []*net.IPNet{
			{IP: net.IPv4(127, 0, 0, 0).To4(), Mask: net.CIDRMask(8, 32)},
			{IP: net.IPv6loopback, Mask: net.CIDRMask(128, 128)},
		},
	}
	certDER, err = x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("localca: making the CA: %w", err)
	}
	keyDER, err = x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("localca: %w", err)
	}
	return certDER, keyDER, nil
}

// randomSerial is a random 128-bit serial number.
func randomSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("localca: serial number: %w", err)
	}
	return serial, nil
}

// userAtHost names whose CA this is, so that one CA among several in a
// trust store can be told apart.
func userAtHost() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return name + "@" + host
}

// writeTemp writes data to a new file in dir with the given mode, synced,
// and returns its name.
func writeTemp(dir, base string, data []byte, mode fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("localca: %w", err)
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("localca: %w", err)
	}
	return name, nil
}

// publish puts the complete file tmp at dst, failing with fs.ErrExist
// rather than replace dst. A hard link does that atomically; where the
// file system has none, a rename after a look does nearly as well.
func publish(tmp, dst string) error {
	err := os.Link(tmp, dst)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if _, serr := os.Lstat(dst); serr == nil {
		return &fs.PathError{Op: "create", Path: dst, Err: fs.ErrExist}
	}
	return os.Rename(tmp, dst)
}

// syncDir makes the new directory entries durable, where the system can.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
