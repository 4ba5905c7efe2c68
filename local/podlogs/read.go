package podlogs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// copyLog writes the lines of l that o selects to w, then, when o.follow,
// the lines appended to it until ctx ends or l.Live closes. flush, when
// set, is called after each write so a follower sees lines at once.
func copyLog(ctx context.Context, w io.Writer, flush func(), f *os.File, l Log, o options, poll time.Duration) error {
	start := l.From
	if o.tailLines >= 0 {
		end, err := rangeEnd(f, l)
		if err != nil {
			return err
		}
		if start, err = tailStart(f, l.From, end, o.tailLines); err != nil {
			return fmt.Errorf("tail log: %w", err)
		}
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("seek log: %w", err)
	}
	c := &copier{w: w, flush: flush, o: o, left: o.limitBytes}
	var r io.Reader = f
	if l.To >= 0 {
		r = io.LimitReader(f, max(l.To-start, 0))
	}
	return c.run(ctx, bufio.NewReaderSize(r, 64<<10), o.follow && l.To < 0, l.Live, poll)
}

// openLog opens l's file; a file not made yet is a container that has not
// started, which the kubelet refuses in the same words.
func openLog(l Log, pod, container string) (*os.File, error) {
	f, err := os.Open(l.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &Error{Code: http.StatusBadRequest, Message: fmt.Sprintf("container %q in pod %q is waiting to start", container, pod)}
	}
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	return f, nil
}

// rangeEnd is where l ends now.
func rangeEnd(f *os.File, l Log) (int64, error) {
	if l.To >= 0 {
		return l.To, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat log: %w", err)
	}
	return fi.Size(), nil
}

// copier writes selected lines and counts what limitBytes leaves.
type copier struct {
	w     io.Writer
	flush func()
	o     options
	left  int64 // bytes limitBytes still allows; unused when it is 0
}

var errLimit = errors.New("limitBytes reached")

// run copies whole lines; at the end of the file it stops unless follow,
// then waits for more until ctx ends or live closes (after which what
// was written meanwhile is still copied).
func (c *copier) run(ctx context.Context, r *bufio.Reader, follow bool, live <-chan struct{}, poll time.Duration) error {
	var partial []byte
	ended := !follow || live == nil
	for {
		chunk, err := r.ReadBytes('\n')
		partial = append(partial, chunk...)
		if err == nil {
			if werr := c.line(partial); werr != nil {
				return ignoreLimit(werr)
			}
			partial = partial[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("read log: %w", err)
		}
		if ended {
			if len(partial) > 0 {
				return ignoreLimit(c.line(partial)) // a last line without its end
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-live:
			ended = true
		case <-time.After(poll):
		}
	}
}

func ignoreLimit(err error) error {
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

// line writes one line of the file, unless since leaves it out, with or
// without its time.
func (c *copier) line(raw []byte) error {
	stamp, rest, ok := splitStamp(raw)
	if ok && !c.o.since.IsZero() && stamp.Before(c.o.since) {
		return nil
	}
	out := raw
	if ok && !c.o.timestamps {
		out = rest
	}
	if c.o.limitBytes > 0 {
		if int64(len(out)) >= c.left {
			out = out[:c.left]
			c.left = 0
		} else {
			c.left -= int64(len(out))
		}
	}
	if _, err := c.w.Write(out); err != nil {
		return err
	}
	if c.flush != nil {
		c.flush()
	}
	if c.o.limitBytes > 0 && c.left == 0 {
		return errLimit
	}
	return nil
}

// splitStamp parses the time a line of the file begins with.
func splitStamp(raw []byte) (time.Time, []byte, bool) {
	i := bytes.IndexByte(raw, ' ')
	if i < 0 {
		return time.Time{}, raw, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(raw[:i]))
	if err != nil {
		return time.Time{}, raw, false
	}
	return t, raw[i+1:], true
}

// tailStart is the offset of the first of the last n lines between from
// and end, read backwards in blocks so a long log is not read whole.
func tailStart(f *os.File, from, end, n int64) (int64, error) {
	if n == 0 {
		return end, nil
	}
	const block = 32 << 10
	buf := make([]byte, block)
	pos := end
	seen := int64(0)
	skipLast := true // the newline that ends the last line starts no line
	for pos > from {
		size := min(block, pos-from)
		pos -= size
		if _, err := f.ReadAt(buf[:size], pos); err != nil {
			return 0, err
		}
		for i := size - 1; i >= 0; i-- {
			if buf[i] != '\n' {
				skipLast = false
				continue
			}
			if skipLast {
				skipLast = false
				continue
			}
			seen++
			if seen == n {
				return pos + i + 1, nil
			}
		}
	}
	return from, nil
}
