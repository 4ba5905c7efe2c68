package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// lockFile is the file, inside the state directory, that is locked and
// holds the owner's pid.
const lockFile = "knit.lock"

// InUseError says that another knit dev holds the state directory.
type InUseError struct {
	Dir string
	// PID is the holder's process id, 0 when it has not written it yet.
	PID int
}

func (e *InUseError) Error() string {
	holder := "another knit dev"
	if e.PID > 0 {
		holder = fmt.Sprintf("another knit dev (pid %d)", e.PID)
	}
	return fmt.Sprintf("state dir %s is in use by %s; stop it first or pass --state-dir", e.Dir, holder)
}

// Lock takes the state directory for this process, creating it (0700)
// when missing. The lock is an flock, so the kernel drops it when the
// process dies, however it dies: a stale lock file never blocks a restart.
// release unlocks it; calling it again is a no-op.
func Lock(dir string) (release func() error, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &InUseError{Dir: dir, PID: readPID(f)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := writePID(f); err != nil {
		f.Close() // closing drops the lock
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			// The file stays: removing it would let a process that opened
			// it before the removal lock a file nobody else can see.
			err = f.Close()
		})
		return err
	}, nil
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}
