package podlogs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/knitops/knit/local/controlplane"
)

// fakeSource knows one pod, "ns/web", with containers "app" (the file,
// a previous run in its first half) and "waiting" (no file yet).
type fakeSource struct {
	path  string
	split int64 // where the current run begins
	live  chan struct{}
}

func (s *fakeSource) ContainerLog(namespace, pod, container string, previous bool) (Log, error) {
	if namespace != "ns" || pod != "web" {
		return Log{}, PodNotFound(pod)
	}
	switch container {
	case "app":
	case "waiting":
		return Log{Path: s.path + ".none", To: -1}, nil
	default:
		return Log{}, ContainerNotFound(container, pod)
	}
	if previous {
		if s.split == 0 {
			return Log{}, PreviousNotFound(container, pod)
		}
		return Log{Path: s.path, From: 0, To: s.split}, nil
	}
	return Log{Path: s.path, From: s.split, To: -1, Live: s.live}, nil
}

// endpoint is a Server on loopback with real TLS, and clients.
type endpoint struct {
	url    string
	ca     *controlplane.CA
	caPool *x509.CertPool
}

func startEndpoint(t *testing.T, src Source) *endpoint {
	t.Helper()
	ca, err := controlplane.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.IssueServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.CAPEM())
	ln, err := Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := New(Options{Source: src, Cert: cert, ClientCAs: pool, ClientCN: controlplane.KubeletClientCN, Log: logr.Discard(), Poll: 10 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return &endpoint{url: "https://" + ln.Addr().String(), ca: ca, caPool: pool}
}

// client presents a client certificate for cn ("" for none).
func (e *endpoint) client(t *testing.T, cn string) *http.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: e.caPool}
	if cn != "" {
		certPEM, keyPEM, err := e.ca.IssueClientCert(cn)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
}

func (e *endpoint) get(t *testing.T, c *http.Client, path string, q url.Values) (int, string) {
	t.Helper()
	resp, err := c.Get(e.url + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// stamped writes lines to path as a Stream does, the i-th at base+i min.
func stamped(t *testing.T, path string, base time.Time, lines ...string) int64 {
	t.Helper()
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%s %s\n", base.Add(time.Duration(i)*time.Minute).UTC().Format(TimeFormat), l)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	return fi.Size()
}

func TestContainerLogs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	split := stamped(t, path, base.Add(-time.Hour), "crashed once")
	stamped(t, path, base, "one", "two", "three", "four")
	src := &fakeSource{path: path, split: split}
	e := startEndpoint(t, src)
	c := e.client(t, controlplane.KubeletClientCN)
	ts := func(i int) string { return base.Add(time.Duration(i)*time.Minute).UTC().Format(TimeFormat) + " " }

	for _, tc := range []struct {
		name     string
		path     string
		query    url.Values
		wantCode int
		want     string
	}{
		{"everything of the current run", "/containerLogs/ns/web/app", nil, 200, "one\ntwo\nthree\nfour\n"},
		{"tail", "/containerLogs/ns/web/app", url.Values{"tailLines": {"2"}}, 200, "three\nfour\n"},
		{"tail more than there is", "/containerLogs/ns/web/app", url.Values{"tailLines": {"9"}}, 200, "one\ntwo\nthree\nfour\n"},
		{"tail 0", "/containerLogs/ns/web/app", url.Values{"tailLines": {"0"}}, 200, ""},
		{"limit bytes", "/containerLogs/ns/web/app", url.Values{"limitBytes": {"6"}}, 200, "one\ntw"},
		{"timestamps", "/containerLogs/ns/web/app", url.Values{"timestamps": {"true"}, "tailLines": {"1"}}, 200, ts(3) + "four\n"},
		{"since time", "/containerLogs/ns/web/app", url.Values{"sinceTime": {base.Add(2 * time.Minute).UTC().Format(time.RFC3339)}}, 200, "three\nfour\n"},
		{"since seconds", "/containerLogs/ns/web/app", url.Values{"sinceSeconds": {"7200"}}, 200, "one\ntwo\nthree\nfour\n"},
		{"since seconds, nothing that recent", "/containerLogs/ns/web/app", url.Values{"sinceSeconds": {"60"}}, 200, ""},
		{"previous run", "/containerLogs/ns/web/app", url.Values{"previous": {"true"}}, 200, "crashed once\n"},
		{"unknown pod", "/containerLogs/ns/nope/app", nil, 404, `pod "nope" does not exist` + "\n"},
		{"unknown container", "/containerLogs/ns/web/db", nil, 404, `container "db" not found in pod "web"` + "\n"},
		{"container not started", "/containerLogs/ns/web/waiting", nil, 400, `container "waiting" in pod "web" is waiting to start` + "\n"},
		{"bad parameter", "/containerLogs/ns/web/app", url.Values{"tailLines": {"x"}}, 400, `tailLines="x" is not a non-negative integer` + "\n"},
		{"another path", "/pods", nil, 404, "404 page not found\n"},
		{"exec is not served", "/exec/ns/web/app", nil, 404, "404 page not found\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.get(t, c, tc.path, tc.query)
			if code != tc.wantCode || body != tc.want {
				t.Errorf("GET %s?%s = %d %q, want %d %q", tc.path, tc.query.Encode(), code, body, tc.wantCode, tc.want)
			}
		})
	}

	src.split = 0
	if code, body := e.get(t, c, "/containerLogs/ns/web/app", url.Values{"previous": {"true"}}); code != 400 ||
		body != `previous terminated container "app" in pod "web" not found`+"\n" {
		t.Errorf("previous of a container that never restarted = %d %q", code, body)
	}
}

func TestOnlyGet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	stamped(t, path, time.Now(), "x")
	e := startEndpoint(t, &fakeSource{path: path})
	resp, err := e.client(t, controlplane.KubeletClientCN).Post(e.url+"/containerLogs/ns/web/app", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d, want 405", resp.StatusCode)
	}
}

func TestClientsWithoutTheKubeletClientCertificateAreRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	stamped(t, path, time.Now(), "secret")
	e := startEndpoint(t, &fakeSource{path: path})
	other, err := controlplane.LoadOrCreateCA(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	foreign := &endpoint{url: e.url, ca: other, caPool: e.caPool}
	for name, c := range map[string]*http.Client{
		"no certificate":                        e.client(t, ""),
		"knit dev's CA, another name":           e.client(t, "kube-apiserver-etcd-client"),
		"the kubelet client's name, another CA": foreign.client(t, controlplane.KubeletClientCN),
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := c.Get(e.url + "/containerLogs/ns/web/app")
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Errorf("GET = %d %q, want the TLS handshake refused", resp.StatusCode, b)
			}
		})
	}
}

func TestFollowStreamsWhatIsAppendedUntilTheContainerIsGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := NewFile(f).Stream()
	fmt.Fprintln(out, "before")
	live := make(chan struct{})
	e := startEndpoint(t, &fakeSource{path: path, live: live})
	resp, err := e.client(t, controlplane.KubeletClientCN).Get(e.url + "/containerLogs/ns/web/app?follow=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("before\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "before\n" {
		t.Fatalf("first line = %q, %v", first, err)
	}
	fmt.Fprint(out, "after")
	fmt.Fprintln(out, ", in two writes")
	fmt.Fprintln(out, "last")
	close(live)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "after, in two writes\nlast\n" {
		t.Errorf("followed = %q, %v; want the lines written after the first was read", rest, err)
	}
}
