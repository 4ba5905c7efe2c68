package queue

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/grpchealth"
)

// probeUserAgent is what the app sees on HTTP probes; Kubernetes sends
// "kube-probe/<version>" and apps match the prefix.
const probeUserAgent = "kube-probe/knit"

// probeSpec mirrors the parts of a corev1.Probe the queue-proxy runs,
// decoded from SERVING_READINESS_PROBE without importing k8s.io/api.
type probeSpec struct {
	TCPSocket *struct {
		Host string    `json:"host"`
		Port probePort `json:"port"`
	} `json:"tcpSocket"`
	HTTPGet *struct {
		Host        string    `json:"host"`
		Port        probePort `json:"port"`
		Path        string    `json:"path"`
		Scheme      string    `json:"scheme"`
		HTTPHeaders []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"httpHeaders"`
	} `json:"httpGet"`
	GRPC *struct {
		Port    int     `json:"port"`
		Service *string `json:"service"`
	} `json:"grpc"`
	Exec             json.RawMessage `json:"exec"`
	PeriodSeconds    int             `json:"periodSeconds"`
	TimeoutSeconds   int             `json:"timeoutSeconds"`
	SuccessThreshold int             `json:"successThreshold"`
	FailureThreshold int             `json:"failureThreshold"`
}

// probePort is an IntOrString port; a named port resolves to the user port.
type probePort int

func (p *probePort) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			*p = 0 // a named port: the user port
			return nil
		}
		*p = probePort(n)
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("port %s is neither a number nor a name", b)
	}
	*p = probePort(n)
	return nil
}

// userProbe is one runnable check of the user container.
type userProbe struct {
	check            func(ctx context.Context) error
	period           time.Duration
	successThreshold int
	failureThreshold int
}

// parseProbes decodes SERVING_READINESS_PROBE (one probe or a list, as
// Knative encodes it) into runnable checks. Empty means a TCP connect to
// the user port. Exec probes, which Knative rewrites to TCP before they
// reach the queue, are run as TCP connects; gRPC probes ask the app's
// grpc.health.v1 service, as Knative's queue-proxy does.
func parseProbes(encoded string, userPort int, autodetectHTTP2 bool) ([]userProbe, error) {
	encoded = strings.TrimSpace(encoded)
	var specs []probeSpec
	switch {
	case encoded == "":
		specs = []probeSpec{{}}
	case encoded[0] == '[':
		if err := strictUnmarshal(encoded, &specs); err != nil {
			return nil, fmt.Errorf("not a JSON list of probes: %w", err)
		}
	default:
		var s probeSpec
		if err := strictUnmarshal(encoded, &s); err != nil {
			return nil, fmt.Errorf("not a JSON probe: %w", err)
		}
		specs = []probeSpec{s}
	}
	probes := make([]userProbe, 0, len(specs))
	for i, s := range specs {
		p, err := s.userProbe(userPort, autodetectHTTP2)
		if err != nil {
			return nil, fmt.Errorf("probe %d: %w", i, err)
		}
		probes = append(probes, p)
	}
	return probes, nil
}

func strictUnmarshal(s string, v any) error {
	d := json.NewDecoder(strings.NewReader(s))
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func (s probeSpec) userProbe(userPort int, autodetectHTTP2 bool) (userProbe, error) {
	if s.PeriodSeconds < 0 || s.TimeoutSeconds < 0 || s.SuccessThreshold < 0 || s.FailureThreshold < 0 {
		return userProbe{}, errors.New("periodSeconds, timeoutSeconds and thresholds must not be negative")
	}
	if int64(s.PeriodSeconds) > maxDurationSeconds || int64(s.TimeoutSeconds) > maxDurationSeconds {
		// Past time.Duration's range the period would wrap negative, and
		// the prober would probe in a loop.
		return userProbe{}, fmt.Errorf("periodSeconds and timeoutSeconds must be at most %d", maxDurationSeconds)
	}
	p := userProbe{
		period:           defaultProbePeriod,
		successThreshold: max(s.SuccessThreshold, 1),
		failureThreshold: s.FailureThreshold,
	}
	if s.PeriodSeconds > 0 {
		p.period = time.Duration(s.PeriodSeconds) * time.Second
	}
	if p.failureThreshold == 0 {
		p.failureThreshold = 3 // Kubernetes' default
	}
	timeout := defaultProbeTimeout
	if s.TimeoutSeconds > 0 {
		timeout = time.Duration(s.TimeoutSeconds) * time.Second
	}
	addr := func(host string, port int) string {
		if host == "" {
			host = "127.0.0.1"
		}
		if port == 0 {
			port = userPort
		}
		return net.JoinHostPort(host, strconv.Itoa(port))
	}
	switch {
	case s.HTTPGet != nil:
		h := s.HTTPGet
		scheme := strings.ToLower(h.Scheme)
		switch scheme {
		case "":
			scheme = "http"
		case "http", "https":
		default:
			return userProbe{}, fmt.Errorf("httpGet scheme %q: want HTTP or HTTPS", h.Scheme)
		}
		path := h.Path
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		url := scheme + "://" + addr(h.Host, int(h.Port)) + path
		header := http.Header{"User-Agent": {probeUserAgent}}
		for _, kv := range h.HTTPHeaders {
			header.Add(kv.Name, kv.Value)
		}
		client := &http.Client{
			Timeout: timeout,
			Transport: &http.Transport{
				Proxy:             nil,
				DisableKeepAlives: true,
				//nolint:gosec // Kubernetes' HTTPS probes do not verify certificates either.
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		p.check = func(ctx context.Context) error { return httpCheck(ctx, client, url, header) }
		if autodetectHTTP2 && scheme == "http" {
			h2 := &http.Client{Timeout: timeout, Transport: h2cTransport(), CheckRedirect: client.CheckRedirect}
			p.check = func(ctx context.Context) error { return h2cAwareCheck(ctx, client, h2, url, header) }
		}
	case s.GRPC != nil:
		target, service := addr("", s.GRPC.Port), ""
		if s.GRPC.Service != nil {
			service = *s.GRPC.Service
		}
		rt := grpchealth.NewTransport()
		p.check = func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			return grpchealth.Check(ctx, rt, target, service)
		}
	default:
		port := 0
		host := ""
		if s.TCPSocket != nil {
			host, port = s.TCPSocket.Host, int(s.TCPSocket.Port)
		}
		target := addr(host, port)
		dialer := &net.Dialer{Timeout: timeout}
		p.check = func(ctx context.Context) error {
			c, err := dialer.DialContext(ctx, "tcp", target)
			if err != nil {
				return err
			}
			return c.Close()
		}
	}
	return p, nil
}

// httpCheck succeeds on a 2xx or 3xx answer, as Kubernetes does.
func httpCheck(ctx context.Context, client *http.Client, url string, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4<<10))
	if res.StatusCode < 200 || res.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe %s answered %s", url, res.Status)
	}
	return nil
}

// h2cTransport speaks HTTP/2 with prior knowledge over plain TCP, as to
// an app that answered an h2c upgrade.
func h2cTransport() *http.Transport {
	t := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	t.Protocols = new(http.Protocols)
	t.Protocols.SetUnencryptedHTTP2(true)
	return t
}

// h2cAwareCheck is Knative's HTTP probe with HTTP/2 auto-detection: an
// OPTIONS request offering an h2c upgrade first; an app that switches
// protocols is probed over HTTP/2, one that answers 2xx/3xx is ready as
// it is, anything else is not ready. Asked every time, as Knative asks:
// an app restarted in place may have changed its mind.
func h2cAwareCheck(ctx context.Context, h1, h2 *http.Client, url string, header http.Header) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodOptions, url, nil)
	if err != nil {
		return err
	}
	req.Header = header.Clone()
	req.Header.Set("Connection", "Upgrade, HTTP2-Settings")
	req.Header.Set("Upgrade", "h2c")
	req.Header.Set("HTTP2-Settings", "")
	res, err := h1.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	switch {
	case res.StatusCode == http.StatusSwitchingProtocols && strings.EqualFold(res.Header.Get("Upgrade"), "h2c"):
		return httpCheck(ctx, h2, url, header)
	case res.StatusCode >= 200 && res.StatusCode < 400:
		return nil
	}
	return fmt.Errorf("HTTP probe %s answered %s to an h2c upgrade offer", url, res.Status)
}
