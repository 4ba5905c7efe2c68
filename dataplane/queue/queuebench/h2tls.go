package queuebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// H2Conn sends one shape's request over one HTTP/2 connection over TLS,
// one stream at a time, as a browser's tab would reach an edge proxy. It
// is net/http's client, heavier than Conn: compare its cells with each
// other. It is not safe for concurrent use.
type H2Conn struct {
	transport *http.Transport
	req       *http.Request
	shape     Shape
	cancel    context.CancelFunc
}

// h2TLSWorkers are spec.Concurrency H2Conns.
func h2TLSWorkers(spec LoadSpec, deadline time.Time) ([]worker, func(), error) {
	conns := make([]*H2Conn, spec.Concurrency)
	release := func() {
		for _, c := range conns {
			if c != nil {
				c.transport.CloseIdleConnections()
				c.cancel()
			}
		}
	}
	workers := make([]worker, spec.Concurrency)
	for i := range conns {
		c, err := newH2Conn(spec, deadline)
		if err != nil {
			release()
			return nil, nil, err
		}
		conns[i], workers[i] = c, c
	}
	return workers, release, nil
}

func newH2Conn(spec LoadSpec, deadline time.Time) (*H2Conn, error) {
	shape := spec.Shape
	if shape == "" {
		shape = ShapeGet
	}
	if shape == ShapeH2C || shape == ShapeStream {
		return nil, fmt.Errorf("%s is not measured over TLS", shape.Label())
	}
	u, err := shapeURL(shape, spec.URL)
	if err != nil {
		return nil, err
	}
	u.Scheme = "https"
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	method := http.MethodGet
	if shape == ShapePost {
		method = http.MethodPost
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	for k, vv := range spec.Header {
		req.Header[k] = vv
	}
	req.Header.Set("User-Agent", "knit-bench")
	if shape == ShapePost {
		req.Header.Set("Content-Type", "application/octet-stream")
		req.ContentLength = PostBodyBytes
	}
	req.Host = spec.Host
	t := &http.Transport{
		TLSClientConfig:     spec.TLS.Clone(),
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		DisableCompression:  true,
		IdleConnTimeout:     90 * time.Second,
	}
	return &H2Conn{transport: t, req: req, shape: shape, cancel: cancel}, nil
}

// Do sends the request and reads the whole answer: anything but a 200
// over HTTP/2 with the shape's body is an error.
func (c *H2Conn) Do() error {
	if c.shape == ShapePost {
		c.req.Body = io.NopCloser(bytes.NewReader(postBody))
	}
	res, err := c.transport.RoundTrip(c.req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var sink bytes.Buffer
		io.Copy(&capped{b: &sink}, res.Body)
		return &StatusError{URL: c.req.URL.String(), Status: res.StatusCode, Body: string(bytes.TrimSpace(sink.Bytes()))}
	}
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		return err
	}
	if res.ProtoMajor != 2 {
		return fmt.Errorf("%s: answered over %s, want HTTP/2", c.req.URL, res.Proto)
	}
	if want := c.shape.wantBody(); n != want {
		return &BodyError{URL: c.req.URL.String(), Got: n, Want: want}
	}
	return nil
}
