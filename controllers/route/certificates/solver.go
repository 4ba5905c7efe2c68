package certificates

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// solver publishes HTTP-01 responses as Secrets the ingress serves, and
// returns from Present only once the ingress answers with it: the CA
// validates the moment it is told to, and a watch takes a moment to reach
// the ingress.
type solver struct {
	client client.Client
	// ingress is the ingress's plain-HTTP base URL as the controller
	// reaches it; "" skips the check.
	ingress string
	http    *http.Client
}

// presentTimeout bounds the wait for the ingress to serve a response.
const presentTimeout = 30 * time.Second

func (s *solver) Present(ctx context.Context, host, token, keyAuthorization string) error {
	sec := challengeSecret(host, token, keyAuthorization)
	if err := s.client.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("publish the HTTP-01 response for %s: %w", host, err)
	}
	if s.ingress == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, presentTimeout)
	defer cancel()
	var last string
	for {
		got, err := s.fetch(ctx, host, token)
		if err == nil && got == keyAuthorization {
			return nil
		}
		last = fmt.Sprintf("%q %v", got, err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("the ingress at %s does not serve the HTTP-01 response for %s (last: %s)", s.ingress, host, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// fetch asks the ingress for host's response to token, as the CA will.
func (s *solver) fetch(ctx context.Context, host, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.ingress+"/.well-known/acme-challenge/"+token, nil)
	if err != nil {
		return "", err
	}
	req.Host = host
	resp, err := s.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s", resp.Status)
	}
	return strings.TrimSpace(string(body)), err
}

func (s *solver) CleanUp(ctx context.Context, host, token string) error {
	sec := challengeSecret(host, token, "")
	if err := s.client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("withdraw the HTTP-01 response for %s: %w", host, err)
	}
	return nil
}
