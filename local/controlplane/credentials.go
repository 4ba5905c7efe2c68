package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// adminUser is who the admin token authenticates as; system:masters makes
// it cluster-admin under RBAC without a binding.
const (
	adminUser  = "knit-admin"
	adminGroup = "system:masters"
)

// loadOrCreateToken returns the admin bearer token kept in the state
// directory, so kubeconfigs written by earlier runs keep authenticating.
func loadOrCreateToken(stateDir string) (string, error) {
	path := filepath.Join(pkiDir(stateDir), "admin.token")
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		token := strings.TrimSpace(string(data))
		if token == "" || strings.ContainsAny(token, ",\"\n") {
			return "", fmt.Errorf("%s is not a token: delete it to start over", path)
		}
		return token, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("read admin token: %w", err)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate admin token: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	if err := writeSecret(path, []byte(token+"\n")); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	return token, nil
}

// writeTokenFile writes the API server's --token-auth-file: one line,
// token,user,uid,"groups".
func writeTokenFile(path, token string) error {
	line := fmt.Sprintf("%s,%s,%s,%q\n", token, adminUser, adminUser, adminGroup)
	if err := writeSecret(path, []byte(line)); err != nil {
		return fmt.Errorf("write token file: %w", err)
	}
	return nil
}

// serviceAccountKeys makes sure the key that signs service-account tokens
// exists, reusing it across restarts so issued tokens stay valid, and
// returns the paths of the private key and its public half.
func serviceAccountKeys(stateDir string) (keyPath, pubPath string, err error) {
	keyPath = filepath.Join(pkiDir(stateDir), "sa.key")
	pubPath = filepath.Join(pkiDir(stateDir), "sa.pub")
	key, err := loadOrCreateKey(keyPath)
	if err != nil {
		return "", "", fmt.Errorf("service-account key: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", fmt.Errorf("service-account public key: %w", err)
	}
	if err := writeSecret(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})); err != nil {
		return "", "", fmt.Errorf("write service-account public key: %w", err)
	}
	return keyPath, pubPath, nil
}

func loadOrCreateKey(path string) (*ecdsa.PrivateKey, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		key, err := decodeECKey(data)
		if err != nil {
			return nil, fmt.Errorf("%s (delete it to start over): %w", path, err)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	keyPEM, err := encodeECKey(key)
	if err != nil {
		return nil, err
	}
	return key, writeSecret(path, keyPEM)
}
