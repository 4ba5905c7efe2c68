package hopauth

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// MinKeyBytes is the shortest key accepted: 256 bits.
const MinKeyBytes = 32

// reloadEvery is how often a file-backed Keyring looks at its file: the
// kubelet rewrites a mounted Secret in place, and a rotated key must
// reach a running process without a restart.
const reloadEvery = 10 * time.Second

// ErrNoKey is wrapped by every error about missing or short key material.
var ErrNoKey = errors.New("no usable key")

// Keyring is a set of secret keys: the first signs, any verifies. Safe
// for concurrent use.
type Keyring struct {
	keys atomic.Pointer[[][]byte]

	// path, when set, is re-read at most every reloadEvery.
	path    string
	now     func() time.Time
	mu      sync.Mutex
	checked time.Time
	modTime time.Time
}

// NewKeyring holds the given keys, the first signing.
func NewKeyring(keys ...[]byte) (*Keyring, error) {
	if err := validKeys(keys); err != nil {
		return nil, err
	}
	k := &Keyring{now: time.Now}
	k.keys.Store(&keys)
	return k, nil
}

// Generate returns a Keyring with one random key, for components that
// share a process (knit dev) and for tests.
func Generate() *Keyring {
	key := make([]byte, MinKeyBytes)
	_, _ = rand.Read(key) // never fails (crypto/rand since Go 1.24)
	k, _ := NewKeyring(key)
	return k
}

// LoadFile reads keys from path, one a line (blank lines ignored), and
// reads it again when it changes, so a key added to or removed from the
// Secret takes effect within seconds. A later read that fails or finds
// no usable key keeps the keys already loaded.
func LoadFile(path string) (*Keyring, error) {
	keys, mod, err := readKeys(path)
	if err != nil {
		return nil, err
	}
	k := &Keyring{path: path, now: time.Now, modTime: mod}
	k.checked = k.now()
	k.keys.Store(&keys)
	return k, nil
}

func readKeys(path string) ([][]byte, time.Time, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("key file: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("key file: %w", err)
	}
	var keys [][]byte
	for line := range bytes.Lines(data) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			keys = append(keys, line)
		}
	}
	if err := validKeys(keys); err != nil {
		return nil, time.Time{}, fmt.Errorf("key file %s: %w", path, err)
	}
	return keys, st.ModTime(), nil
}

func validKeys(keys [][]byte) error {
	if len(keys) == 0 {
		return fmt.Errorf("%w: no key", ErrNoKey)
	}
	for i, k := range keys {
		if len(k) < MinKeyBytes {
			return fmt.Errorf("%w: key %d has %d bytes, want at least %d", ErrNoKey, i+1, len(k), MinKeyBytes)
		}
	}
	return nil
}

// current returns the keys, re-reading the file first when it is due.
func (k *Keyring) current() [][]byte {
	if k.path != "" {
		k.maybeReload()
	}
	return *k.keys.Load()
}

func (k *Keyring) maybeReload() {
	now := k.now()
	if !k.mu.TryLock() {
		return // another caller is reloading; use what is loaded
	}
	defer k.mu.Unlock()
	if now.Sub(k.checked) < reloadEvery {
		return
	}
	k.checked = now
	st, err := os.Stat(k.path)
	if err != nil || st.ModTime().Equal(k.modTime) {
		return
	}
	keys, mod, err := readKeys(k.path)
	if err != nil {
		return
	}
	k.modTime = mod
	k.keys.Store(&keys)
}
