package gitserver

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// TLSConfig serves HTTPS with the certificate and key in certFile and
// keyFile (PEM), read again whenever either file changes, so that a
// renewed certificate (a Secret the kubelet updates in place) is served
// without a restart. Every request carries the server's token, which
// opens every repository: on anything but loopback it must not cross the
// network in clear text.
func TLSConfig(certFile, keyFile string) (*tls.Config, error) {
	k := &keyPair{certFile: certFile, keyFile: keyFile}
	if _, err := k.get(); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return k.get() },
	}, nil
}

// keyPair is a certificate loaded from files, kept until they change.
type keyPair struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime [2]time.Time
}

func (k *keyPair) get() (*tls.Certificate, error) {
	mod, err := modTimes(k.certFile, k.keyFile)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert != nil && mod == k.modTime {
		return k.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		if k.cert != nil {
			return k.cert, nil // half-written by an update: keep the last one
		}
		return nil, fmt.Errorf("git server TLS certificate: %w", err)
	}
	k.cert, k.modTime = &cert, mod
	return k.cert, nil
}

func modTimes(files ...string) ([2]time.Time, error) {
	var out [2]time.Time
	for i, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return out, fmt.Errorf("git server TLS certificate: %w", err)
		}
		out[i] = fi.ModTime()
	}
	return out, nil
}
