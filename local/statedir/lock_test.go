package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLockExcludesSecondHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".knit")

	release, err := Lock(dir)
	if err != nil {
		t.Fatalf("first Lock: %v", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("state dir not created: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("state dir mode = %o, want 700", perm)
	}
	data, err := os.ReadFile(filepath.Join(dir, lockFile))
	if err != nil {
		t.Fatalf("read lock file: %v", err)
	}
	if got, want := strings.TrimSpace(string(data)), strconv.Itoa(os.Getpid()); got != want {
		t.Errorf("lock file holds %q, want pid %s", got, want)
	}

	// flock belongs to the open file description, so a second Lock in the
	// same process conflicts just as another process would.
	_, err = Lock(dir)
	var inUse *InUseError
	if !errors.As(err, &inUse) {
		t.Fatalf("second Lock: got %v, want *InUseError", err)
	}
	if inUse.PID != os.Getpid() {
		t.Errorf("InUseError.PID = %d, want %d", inUse.PID, os.Getpid())
	}
	for _, want := range []string{dir, "pid " + strconv.Itoa(os.Getpid()), "--state-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := release(); err != nil {
		t.Fatalf("second release: %v", err)
	}
	release2, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	if err := release2(); err != nil {
		t.Fatalf("release after relock: %v", err)
	}
}
