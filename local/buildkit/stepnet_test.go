package buildkit

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/knitops/knit/internal/baseimages"
	"github.com/knitops/knit/local/buildproxy"
)

// With hosts allowed, a RUN step fetches from them through knit dev's
// proxy (HTTP_PROXY is set for it), is refused any other host with the
// proxy's words in the build's error, and reaches nothing directly: not
// the allowed server, not the gateway's other ports, no default route.
func TestRunStepsReachAllowedHostsThroughTheProxyOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "reached %s\n", r.URL.Path)
	}))
	defer srv.Close()
	allowed := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(allowed)
	allow, err := buildproxy.ParseAllowList(allowed)
	if err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t, func(o *Options) { o.AllowHosts = allow })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gw := stepGateway(DefaultStepSubnet)

	// Exit 2: the allowed server reached without the proxy; 3: the
	// gateway answers on another port; 4: a default route; 5: the check
	// sees no server where there is one (the proxy).
	dir := buildContext(t, map[string]string{"Dockerfile": busyboxBase + fmt.Sprintf(
		"RUN /bin/busybox wget -q -O /fetched http://%s/simple/ && /bin/busybox grep -q 'reached /simple/' /fetched\n"+
			"RUN %s; reach 127.0.0.1 %s && exit 2; reach %s %s && exit 3; "+
			"/bin/busybox ip route | /bin/busybox grep default && exit 4; reach %s %d || exit 5; exit 0\n",
		allowed, reachHTTP, port, gw, port, gw, proxyPort)})
	var log strings.Builder
	if _, err := d.Build(ctx, Spec{Context: dir, File: "Dockerfile", Repository: "default/repo/allowed", Tag: "t"}, &log, nil); err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}

	dir = buildContext(t, map[string]string{"Dockerfile": busyboxBase + "RUN /bin/busybox wget -q -O- http://refused.invalid/simple/\n"})
	log.Reset()
	_, err = d.Build(ctx, Spec{Context: dir, File: "Dockerfile", Repository: "default/repo/refused", Tag: "t"}, &log, nil)
	want := "Forbidden by knit dev: refused.invalid:80 is not allowed (knit dev --build-allow-host)"
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want ErrFailed quoting the step's %q\n%s", err, want, log.String())
	}
}

// Python's urllib in a RUN step follows HTTPS_PROXY through a CONNECT
// tunnel to an allowed TLS server, and shows the proxy's refusal of any
// other host as pip would: "Tunnel connection failed: 403 Forbidden by
// knit dev: …".
func TestPythonStepTunnelsHTTPSThroughTheProxy(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "reached %s\n", r.URL.Path)
	}))
	defer srv.Close()
	allowed := srv.Listener.Addr().String()
	allow, err := buildproxy.ParseAllowList(allowed)
	if err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t, func(o *Options) { o.AllowHosts = allow })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	python := pushPythonBase(ctx, t, d)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	files := map[string]string{
		"ca.pem": string(ca),
		"fetch.py": "import ssl, sys, urllib.request\n" +
			"ctx = ssl.create_default_context(cafile='/ca.pem')\n" +
			"body = urllib.request.urlopen(sys.argv[1], context=ctx, timeout=30).read().decode()\n" +
			"print(body)\n" +
			"sys.exit(0 if body.startswith('reached ') else 1)\n",
		"Dockerfile": "FROM " + python + "\nCOPY fetch.py ca.pem /\n" +
			"RUN python3 /fetch.py https://" + allowed + "/wheel\n",
	}
	var log strings.Builder
	if _, err := d.Build(ctx, Spec{Context: buildContext(t, files), File: "Dockerfile", Repository: "default/repo/py", Tag: "t"}, &log, nil); err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}

	files["Dockerfile"] = "FROM " + python + "\nCOPY fetch.py ca.pem /\nRUN python3 /fetch.py https://files.pythonhosted.org/packages/\n"
	log.Reset()
	_, err = d.Build(ctx, Spec{Context: buildContext(t, files), File: "Dockerfile", Repository: "default/repo/py-refused", Tag: "t"}, &log, nil)
	want := "Tunnel connection failed: 403 Forbidden by knit dev: files.pythonhosted.org:443 is not allowed (knit dev --build-allow-host)"
	if !errors.Is(err, ErrFailed) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want ErrFailed quoting the step's %q\n%s", err, want, log.String())
	}
}

// pushPythonBase pushes the python base make base-images built to the
// daemon's registry and returns its reference there.
func pushPythonBase(ctx context.Context, t *testing.T, d *Daemon) string {
	t.Helper()
	dir, err := baseimages.Dir("python")
	if err != nil {
		t.Fatal(err)
	}
	registry, err := d.Registry(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref := registry + "/library/python:3.11-slim"
	if _, err := baseimages.Push(ctx, dir, ref); err != nil {
		t.Fatal(err)
	}
	return ref
}
