package runtime

import (
	"bytes"
	"strings"
	"sync"
)

// tailLines and tailLineBytes bound what a tail keeps: enough for the
// message of a crash, never a memory problem however much a process writes.
const (
	tailLines     = 10
	tailLineBytes = 512
)

// tail keeps the last lines written to it, for condition messages; the
// whole output is in the log file.
type tail struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = appendBounded(t.partial, p)
			break
		}
		t.push(string(appendBounded(t.partial, p[:i])))
		t.partial = t.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func appendBounded(dst, p []byte) []byte {
	if room := tailLineBytes - len(dst); len(p) > room {
		p = p[:max(room, 0)]
	}
	return append(dst, p...)
}

func (t *tail) push(line string) {
	line = strings.TrimRight(line, "\r")
	if len(t.lines) == tailLines {
		t.lines = append(t.lines[:0], t.lines[1:]...)
	}
	t.lines = append(t.lines, line)
}

// Lines returns the last complete lines, and the unfinished last one.
func (t *tail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.lines...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	if len(out) > tailLines {
		out = out[len(out)-tailLines:]
	}
	return out
}

// Reset forgets everything, for a process's next run.
func (t *tail) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines, t.partial = nil, nil
}
