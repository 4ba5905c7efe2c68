package buildproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/knitops/knit/gitsync/egress"
)

// maxDrain is how much of a refused request's body is read before the
// refusal is written: closing on unread data would reset the connection
// and lose the refusal.
const maxDrain = 1 << 20

// refuse answers 403 for hostport, saying why and which flag allows it,
// in the status line as well as the body: pip, curl and wget show a
// failed proxy's status line and not its body. what is the refusal in a
// few words for the status line, why the whole of it, and allow the
// --build-allow-host value that lifts it.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, hostport, what, why, allow string) {
	p.log.Info("Refused a RUN step's request", "method", r.Method, "host", hostport, "reason", why)
	reason := fmt.Sprintf("Forbidden by %s: %s (%s)", p.who, what, p.setting)
	body := fmt.Sprintf("%s refused a RUN step's request for %s: %s.\n"+
		"RUN steps reach only the hosts the operator allows; allow this one with\n"+
		"  %s %s\n"+
		"(a host without a port allows ports 80 and 443; *.example.org allows its subdomains).\n"+
		"Allowed now: %s\n", p.who, hostport, why, p.setting, allow, p.allowed())
	respond(w, r, http.StatusForbidden, reason, body)
}

// refuseHost refuses a host that is not on the allow list.
func (p *Proxy) refuseHost(w http.ResponseWriter, r *http.Request, hostport string) {
	p.refuse(w, r, hostport, hostport+" is not allowed", "it is not on the allow list", hostport)
}

func (p *Proxy) allowed() string {
	if len(p.allow) == 0 {
		return "nothing"
	}
	return p.allow.String()
}

// upstreamFailed answers a relayed request whose host could not be
// reached: 403 when the dial-time check refused the address it resolved
// to, else 502 with the error.
func (p *Proxy) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	hostport := r.URL.Host
	if r.URL.Port() == "" {
		hostport = net.JoinHostPort(r.URL.Hostname(), "80")
	}
	p.dialFailed(w, r, hostport, err)
}

func (p *Proxy) dialFailed(w http.ResponseWriter, r *http.Request, hostport string, err error) {
	var denied *egress.DeniedError
	if errors.As(err, &denied) {
		addr := deniedAddr(denied.Target)
		p.refuse(w, r, hostport, fmt.Sprintf("%s resolves to %s, refused", hostport, addr),
			fmt.Sprintf("it resolves to %s (%s), reached only when the allow list names that address", addr, denied.Reason), addr)
		return
	}
	p.log.Info("A RUN step's request failed", "method", r.Method, "host", hostport, "error", err.Error())
	respond(w, r, http.StatusBadGateway, "Bad Gateway", fmt.Sprintf("%s's build proxy could not reach %s: %v\n", p.who, hostport, err))
}

// deniedAddr is the address in an egress refusal's target, written
// "name (address:port)" or "address:port".
func deniedAddr(target string) string {
	if i := strings.LastIndex(target, "("); i >= 0 && strings.HasSuffix(target, ")") {
		return target[i+1 : len(target)-1]
	}
	return target
}

// respond writes a complete response with its own reason phrase on the
// hijacked connection, then closes it.
func respond(w http.ResponseWriter, r *http.Request, status int, reason, body string) {
	reason = strings.Map(func(c rune) rune {
		if c < ' ' || c == 0x7f {
			return ' '
		}
		return c
	}, reason)
	if r.Body != nil {
		_, _ = io.CopyN(io.Discard, r.Body, maxDrain)
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %03d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %s\r\nConnection: close\r\n\r\n%s",
		status, reason, strconv.Itoa(len(body)), body)
	_ = buf.Flush()
}
