package source

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PruneCheckouts removes the checkouts under root (<root>/<sha>, as
// Checkout writes them) that keep does not want and that are older than
// grace, and the half-written ones a crash left behind. The grace covers
// a checkout made for a Revision that is about to exist: a sync checks
// out before it applies. It returns the directories it removed.
func PruneCheckouts(root string, keep func(sha string) bool, grace time.Duration, now time.Time) ([]string, error) {
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list checkouts in %s: %w", root, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || keep(e.Name()) && !strings.HasPrefix(e.Name(), ".checkout-") {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < grace {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}
