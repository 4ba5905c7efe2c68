package gitserver

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/knitops/knit/internal/bytesize"
)

// A push over Options.MaxPushBytes is refused in receive-pack's own
// words, which git shows its user, rather than with an HTTP status, which
// it shows as "RPC failed; HTTP 413" at best, or with whatever git
// http-backend reports of a pack cut short ("unpack-objects abnormal
// exit"). The request's commands (the refs it updates and the client's
// capabilities) are read before http-backend runs; if the body passes the
// limit before receive-pack answered anything, its answer is dropped and
// replaced by a report that refuses every ref and says why:
//
//	remote: push refused: it is over this Git server's limit of 100 MiB …
//	error: remote unpack failed: pack over the 100 MiB limit
//	 ! [remote rejected] main -> main (push over the 100 MiB limit)
//
// receive-pack keeps an incoming pack in a quarantine directory it
// removes when the pack fails: nothing of a refused push is stored.

// maxDrainBytes bounds what the server reads, and drops, of a refused
// push's body before it answers.
const maxDrainBytes = 1 << 30

// maxCommandBytes bounds the command section of a push: the ref updates
// before the pack. A request that sends more is left to http-backend.
const maxCommandBytes = 1 << 20

// pushCommands is what a push's command section says.
type pushCommands struct {
	// refs are the refs the push updates, in order.
	refs []string
	// sideband: the client asked for side-band-64k (or side-band), so the
	// report goes in band 1 and a message may go in band 2.
	sideband bool
}

// readCommands reads the pkt-lines of a receive-pack request up to the
// flush that ends its commands, and returns them raw (to hand on to
// http-backend) and parsed.
func readCommands(r *bufio.Reader) ([]byte, pushCommands, error) {
	var raw bytes.Buffer
	var cmds pushCommands
	for raw.Len() < maxCommandBytes {
		head, err := r.Peek(4)
		if err != nil {
			return raw.Bytes(), cmds, err
		}
		n, err := strconv.ParseUint(string(head), 16, 16)
		if err != nil || n == 1 || n == 2 || n == 3 {
			return raw.Bytes(), cmds, fmt.Errorf("bad pkt-line length %q", head)
		}
		line := make([]byte, max(n, 4))
		if _, err := io.ReadFull(r, line); err != nil {
			return raw.Bytes(), cmds, err
		}
		raw.Write(line)
		if n == 0 {
			return raw.Bytes(), cmds, nil
		}
		cmds.add(string(line[4:]))
	}
	return raw.Bytes(), cmds, fmt.Errorf("commands over %d bytes", maxCommandBytes)
}

// add reads one command, "<old> <new> <ref>[\0<capabilities>]\n"; other
// lines (shallow, push-cert) name no ref.
func (c *pushCommands) add(line string) {
	cmd, caps, hasCaps := strings.Cut(strings.TrimSuffix(line, "\n"), "\x00")
	if hasCaps {
		for _, cap := range strings.Fields(caps) {
			c.sideband = c.sideband || cap == "side-band-64k" || cap == "side-band"
		}
	}
	if f := strings.Fields(cmd); len(f) == 3 && len(f[0]) == len(f[1]) && len(f[0]) >= 40 {
		c.refs = append(c.refs, f[2])
	}
}

// refusal is the response body refusing every ref of cmds: msg for the
// user (band 2), then a report-status whose unpack line and ref lines say
// reason.
func (c pushCommands) refusal(msg, reason string) []byte {
	var report bytes.Buffer
	writePkt(&report, "unpack "+reason+"\n")
	for _, ref := range c.refs {
		writePkt(&report, "ng "+ref+" "+reason+"\n")
	}
	report.WriteString("0000")
	if !c.sideband {
		return report.Bytes()
	}
	var out bytes.Buffer
	writePkt(&out, "\x02"+msg+"\n")
	writePkt(&out, "\x01"+report.String())
	out.WriteString("0000")
	return out.Bytes()
}

func writePkt(w io.Writer, payload string) {
	fmt.Fprintf(w, "%04x%s", len(payload)+4, payload)
}

// tooLarge is the message and the short reason of a refused push.
func (s *Server) tooLarge() (msg, reason string) {
	limit := bytesize.Format(s.opts.MaxPushBytes)
	msg = "push refused: it is over this Git server's limit of " + limit + ", and nothing of it was stored; " +
		"take the large files out of the commits you push (build outputs and media do not belong in the repository knit deploys from)"
	if s.opts.LimitHint != "" {
		msg += ", or " + s.opts.LimitHint
	}
	return msg, "push over the " + limit + " limit"
}

// pushResponse holds back http-backend's response to a push until its
// first byte of body: by then receive-pack has read the whole pack, or
// failed because the body passed the limit (over), in which case the
// response is dropped (refused) for the server's own.
type pushResponse struct {
	w       http.ResponseWriter
	over    *atomic.Bool
	status  int
	started bool // the response is on its way to the client
	refused bool
}

func (p *pushResponse) Header() http.Header { return p.w.Header() }

func (p *pushResponse) WriteHeader(status int) { p.status = status }

func (p *pushResponse) Write(b []byte) (int, error) {
	if !p.start() {
		return len(b), nil
	}
	return p.w.Write(b)
}

// start sends the held-back status unless the push is refused, and
// reports whether the response goes to the client.
func (p *pushResponse) start() bool {
	switch {
	case p.started:
		return true
	case p.refused:
		return false
	case p.over.Load():
		p.refused = true
		return false
	}
	p.started = true
	if p.status == 0 {
		p.status = http.StatusOK
	}
	p.w.WriteHeader(p.status)
	return true
}

// refuse writes the refusal of a push whose body passed the limit.
func (s *Server) refuse(w http.ResponseWriter, cmds pushCommands) {
	msg, reason := s.tooLarge()
	h := w.Header()
	for k := range h {
		delete(h, k)
	}
	h.Set("Content-Type", "application/x-git-receive-pack-result")
	h.Set("Cache-Control", "no-cache")
	// The body may not have been read to its end: the connection cannot
	// carry another request.
	h.Set("Connection", "close")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(cmds.refusal(msg, reason))
}
