package dev

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/knitops/knit/gitsync/hub"
)

// gitTokenFile is where knit dev keeps its Git server's token, beside the
// kubeconfig: `git push http://knit:$(cat .knit/git-token)@…` reads it.
const gitTokenFile = "git-token"

// loadGitToken returns the Git server's token, made on the first start
// and kept in the state directory (mode 0600) so that remotes and
// credential helpers keep working across restarts. Deleting the file
// makes a new one at the next start.
func loadGitToken(stateDir string) (string, error) {
	path := filepath.Join(stateDir, gitTokenFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if token := strings.TrimSpace(string(b)); token != "" {
			return token, nil
		}
		return "", fmt.Errorf("git token %s is empty: delete it and knit dev makes a new one", path)
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("git token: %w", err)
	}
	token, err := hub.NewToken()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return "", fmt.Errorf("git token: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("git token: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("git token: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("git token: %w", err)
	}
	return token, nil
}
