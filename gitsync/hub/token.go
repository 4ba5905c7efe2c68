package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/gitsync/gitserver"
)

// TokenKey is the key of a TokenSecret holding the token.
const TokenKey = gitserver.TokenKey

// DefaultTokenSecret names the Secret in knit's namespace holding the
// Git server's token on a cluster.
const DefaultTokenSecret = "knit-gitserver-token"

// NewToken makes a Git server token: 32 random bytes, in hex.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("git server token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// TokenSecret is the Git server's token on a cluster, kept in one Secret
// in knit's namespace. The Git server creates it on its first start
// (Ensure); it and the controller, which fetches pushed repositories
// with it, read it on every use, so editing the Secret rotates the token
// without a restart.
type TokenSecret struct {
	// Reader reads the Secret; it must not cache Secrets (an API reader),
	// so that nothing watches Secrets cluster-wide.
	Reader client.Reader
	Key    types.NamespacedName
}

// Token reads the token.
func (s TokenSecret) Token(ctx context.Context) (string, error) {
	secret := &corev1.Secret{}
	if err := s.Reader.Get(ctx, s.Key, secret); err != nil {
		return "", fmt.Errorf("the Git server's token, Secret %s: %w", s.Key, err)
	}
	token := strings.TrimSpace(string(secret.Data[TokenKey]))
	if token == "" {
		return "", fmt.Errorf("the Git server's token: Secret %s has no %q key", s.Key, TokenKey)
	}
	return token, nil
}

// Ensure creates the Secret with a new token unless it exists (the
// operator's own, or one made by an earlier start).
func (s TokenSecret) Ensure(ctx context.Context, c client.Writer) error {
	_, err := s.Token(ctx)
	if !apierrors.IsNotFound(err) {
		return err
	}
	token, err := NewToken()
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Key.Namespace, Name: s.Key.Name,
			Labels: map[string]string{"app.kubernetes.io/part-of": "knit"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{TokenKey: []byte(token)},
	}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the Git server's token, Secret %s: %w", s.Key, err)
	}
	return nil
}
