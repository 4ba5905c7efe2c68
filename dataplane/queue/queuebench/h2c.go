package queuebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// H2CConn sends ShapeH2C's GET over one HTTP/2 cleartext connection
// (prior knowledge, no upgrade), one stream at a time, so a load worker
// holds one connection with one request in flight, as Conn does for
// HTTP/1.1. It is net/http's client, heavier than Conn: compare h2c
// cells with each other, not with the HTTP/1.1 shapes. It is not safe
// for concurrent use.
type H2CConn struct {
	transport *http.Transport
	req       *http.Request
	cancel    context.CancelFunc
}

// NewH2CConn returns an h2c connection for ShapeH2C's request to App
// behind rawURL with Host host (the URL's when empty) and the extra
// header; it dials on first use, and no request may run past deadline
// (zero: none).
func NewH2CConn(rawURL, host string, header http.Header, deadline time.Time) (*H2CConn, error) {
	u, err := shapeURL(ShapeH2C, rawURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if !deadline.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, deadline)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	for k, vv := range header {
		req.Header[k] = vv
	}
	req.Header.Set("User-Agent", "knit-bench")
	req.Host = host
	t := &http.Transport{
		Protocols:           new(http.Protocols),
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
		IdleConnTimeout:     90 * time.Second,
	}
	t.Protocols.SetUnencryptedHTTP2(true)
	return &H2CConn{transport: t, req: req, cancel: cancel}, nil
}

// Do sends the request and reads the whole answer: anything but a 200
// over HTTP/2 with ShapeH2C's body is an error.
func (c *H2CConn) Do() error {
	// The request is only read by the transport and sent again once its
	// answer was read, so one value serves every round trip.
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
	if want := ShapeH2C.wantBody(); n != want {
		return &BodyError{URL: c.req.URL.String(), Got: n, Want: want}
	}
	return nil
}

// Close closes the connection.
func (c *H2CConn) Close() {
	c.transport.CloseIdleConnections()
}

// release ends the connection for good, with its deadline's context.
func (c *H2CConn) release() {
	c.Close()
	c.cancel()
}
