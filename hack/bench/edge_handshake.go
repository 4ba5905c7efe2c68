package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// measureHandshakes times new connections to every proxy, the proxies
// taking turns slice by slice: TCP connect, a full TLS handshake (X25519,
// no resumption), a GET, and its answer's first byte. Each proxy gets at
// most edgeHandshakes connections in edgeHandshakeTime.
func measureHandshakes(ctx context.Context, o options, s *edgeSetup) ([]handshakes, error) {
	out := make([]handshakes, len(s.proxies))
	lat := make([][]time.Duration, len(s.proxies))
	wire := []byte("GET / HTTP/1.1\r\nHost: " + edgeHost + "\r\nUser-Agent: knit-bench\r\nConnection: close\r\n\r\n")
	for range o.slices {
		for i, p := range s.proxies {
			var cpu time.Duration
			meter := p.cpuMeter(&cpu)
			meter(true)
			began := time.Now()
			for n := 0; n < edgeHandshakes/o.slices && time.Since(began) < edgeHandshakeTime/time.Duration(o.slices); n++ {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				d, err := handshakeFirstByte(p.tlsAddr, wire)
				if err != nil {
					out[i].errs++
					if out[i].firstErr == nil {
						out[i].firstErr = err
					}
					continue
				}
				lat[i] = append(lat[i], d)
			}
			out[i].elapsed += time.Since(began)
			meter(false)
			out[i].cpu += cpu
		}
	}
	for i, p := range s.proxies {
		slices.Sort(lat[i])
		out[i].proxy, out[i].n = p.name, len(lat[i])
		if n := len(lat[i]); n > 0 {
			out[i].p50, out[i].p99 = lat[i][n/2], lat[i][min(n-1, n*99/100)]
		}
	}
	return out, nil
}

// handshakeFirstByte opens a connection to addr, shakes hands over TLS, sends
// wire and waits for the answer's first byte.
func handshakeFirstByte(addr string, wire []byte) (time.Duration, error) {
	start := time.Now()
	d := &net.Dialer{Timeout: 5 * time.Second, Deadline: start.Add(10 * time.Second)}
	c, err := tls.DialWithDialer(d, "tcp", addr, edgeTLS(edgeH1TLS))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if _, err := c.Write(wire); err != nil {
		return 0, err
	}
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		return 0, fmt.Errorf("reading the first byte: %w", err)
	}
	return time.Since(start), nil
}

// writeEdgeCert writes a self-signed ECDSA P-256 certificate for
// edgeHost, the kind an ACME CA issues, which both proxies serve.
func writeEdgeCert(dir string) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: edgeHost}, DNSNames: []string{edgeHost},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "edge.crt"), filepath.Join(dir, "edge.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", err
	}
	// nginx's master reads the key as root before its workers drop to nobody.
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}
