package podlogs

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// TimeFormat is the prefix of every line in a log file, the kubelet's
// RFC3339NanoFixed: fixed width, so `kubectl logs --timestamps` lines up.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// maxLine bounds the part of a line held back for its end; a longer line
// is written in pieces, each with its own prefix, as the kubelet splits
// long lines.
const maxLine = 16 << 10

// File is a log file several streams write to (a process's stdout and
// stderr), a line at a time.
type File struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// NewFile makes w, a log file opened for appending, a File.
func NewFile(w io.Writer) *File { return &File{w: w, now: time.Now} }

// Stream is one writer into the file; it writes only whole lines, each
// prefixed with the time of its end. Close writes what is left of an
// unfinished last line.
func (f *File) Stream() *Stream { return &Stream{file: f} }

// Stream is a line-stamping writer of one stream into a File. Writers
// sharing one Stream (a command's stdout copied beside its stderr lines)
// are serialized; their unfinished lines would mix, so each stream of a
// process gets a Stream of its own where it can.
type Stream struct {
	mu      sync.Mutex
	file    *File
	partial []byte
}

func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.partial = append(s.partial, p...)
			if len(s.partial) >= maxLine {
				return n, s.flush()
			}
			return n, nil
		}
		s.partial = append(s.partial, p[:i]...)
		if err := s.flush(); err != nil {
			return n, err
		}
		p = p[i+1:]
	}
	return n, nil
}

// Close writes an unfinished last line, if any.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) == 0 {
		return nil
	}
	return s.flush()
}

// flush writes the held line with its time, in one write under the file's
// lock so the streams' lines never interleave.
func (s *Stream) flush() error {
	s.file.mu.Lock()
	defer s.file.mu.Unlock()
	line := make([]byte, 0, len(TimeFormat)+2+len(s.partial))
	line = s.file.now().UTC().AppendFormat(line, TimeFormat)
	line = append(line, ' ')
	line = append(line, s.partial...)
	line = append(line, '\n')
	s.partial = s.partial[:0]
	_, err := s.file.w.Write(line)
	return err
}
