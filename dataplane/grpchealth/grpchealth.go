// Package grpchealth asks a gRPC server how it is, as the kubelet's and
// Knative's gRPC probes do (grpc.health.v1.Health/Check), over cleartext
// HTTP/2 with the standard library alone: the queue-proxy runs beside
// every replica, and a gRPC stack would cost every one of them memory for
// a call made once a second.
package grpchealth

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// checkPath is the Health service's Check method.
const checkPath = "/grpc.health.v1.Health/Check"

// maxResponse bounds the answer read: a HealthCheckResponse is a few bytes.
const maxResponse = 4 << 10

var errNotResponse = errors.New("the answer is not a HealthCheckResponse")

// Status is grpc.health.v1.HealthCheckResponse.ServingStatus.
type Status int

// The serving statuses a Health server answers.
const (
	StatusUnknown        Status = 0
	StatusServing        Status = 1
	StatusNotServing     Status = 2
	StatusServiceUnknown Status = 3
)

func (s Status) String() string {
	switch s {
	case StatusUnknown:
		return "UNKNOWN"
	case StatusServing:
		return "SERVING"
	case StatusNotServing:
		return "NOT_SERVING"
	case StatusServiceUnknown:
		return "SERVICE_UNKNOWN"
	}
	return "status " + strconv.Itoa(int(s))
}

// NewTransport is a transport for Check: cleartext HTTP/2 with prior
// knowledge, as gRPC speaks it without TLS, and no proxy.
func NewTransport() *http.Transport {
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Transport{Proxy: nil, Protocols: protocols}
}

// Check asks the server at addr (host:port) for service's health ("" is
// the server as a whole) and returns nil when it is SERVING. Anything else
// is an error a user can act on: the status, the gRPC error (status 12
// when the server has no Health service) or why no answer came. ctx
// bounds the call.
func Check(ctx context.Context, rt http.RoundTripper, addr, service string) error {
	u := url.URL{Scheme: "http", Host: addr, Path: checkPath}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(frame(request(service))))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	res, err := rt.RoundTrip(req)
	if err != nil {
		return fmt.Errorf("gRPC health check of %s: %w", addr, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("gRPC health check of %s: HTTP %s, not a gRPC answer", addr, res.Status)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("gRPC health check of %s: %w", addr, err)
	}
	if err := grpcError(res); err != nil {
		return fmt.Errorf("gRPC health check of %s: %w", addr, err)
	}
	status, err := parseResponse(body)
	if err != nil {
		return fmt.Errorf("gRPC health check of %s: %w", addr, err)
	}
	if status != StatusServing {
		return fmt.Errorf("gRPC health check of %s: service %q is %s", addr, service, status)
	}
	return nil
}

// grpcError is the call's gRPC status when it is not OK: from the
// trailers, or from the headers of a trailers-only answer.
func grpcError(res *http.Response) error {
	code, msg := res.Trailer.Get("Grpc-Status"), res.Trailer.Get("Grpc-Message")
	if code == "" {
		code, msg = res.Header.Get("Grpc-Status"), res.Header.Get("Grpc-Message")
	}
	switch code {
	case "0":
		return nil
	case "":
		return errors.New("the answer has no grpc-status")
	}
	if m, err := url.PathUnescape(msg); err == nil {
		msg = m
	}
	if msg == "" {
		return fmt.Errorf("gRPC status %s", describeCode(code))
	}
	return fmt.Errorf("gRPC status %s: %s", describeCode(code), msg)
}

// codeMeanings say what the gRPC status codes a health check meets mean,
// for a message a user can act on.
var codeMeanings = map[string]string{
	"4":  "deadline exceeded",
	"5":  "not found",
	"12": "no such method: the app serves no grpc.health.v1.Health",
	"14": "unavailable",
}

// describeCode is a gRPC status code with its meaning when known.
func describeCode(code string) string {
	if m, ok := codeMeanings[code]; ok {
		return code + " (" + m + ")"
	}
	return code
}

// request is a HealthCheckRequest: field 1, the service name.
func request(service string) []byte {
	if service == "" {
		return nil
	}
	msg := []byte{1<<3 | 2}
	msg = binary.AppendUvarint(msg, uint64(len(service)))
	return append(msg, service...)
}

// frame is a gRPC length-prefixed message, uncompressed.
func frame(msg []byte) []byte {
	out := make([]byte, 5, 5+len(msg))
	binary.BigEndian.PutUint32(out[1:], uint32(len(msg)))
	return append(out, msg...)
}

// parseResponse reads the one framed HealthCheckResponse of body: its
// field 1, the status (absent means UNKNOWN, proto3's zero).
func parseResponse(body []byte) (Status, error) {
	if len(body) < 5 {
		return 0, fmt.Errorf("the answer holds no message (%d bytes)", len(body))
	}
	if body[0] != 0 {
		return 0, errors.New("the answer is compressed, which the check did not ask for")
	}
	n := binary.BigEndian.Uint32(body[1:5])
	msg := body[5:]
	if uint32(len(msg)) != n {
		return 0, fmt.Errorf("the answer's message is %d bytes, its frame says %d", len(msg), n)
	}
	status := StatusUnknown
	for len(msg) > 0 {
		key, k := binary.Uvarint(msg)
		if k <= 0 {
			return 0, errNotResponse
		}
		msg = msg[k:]
		field, wire := key>>3, key&7
		switch wire {
		case 0: // varint
			v, k := binary.Uvarint(msg)
			if k <= 0 {
				return 0, errNotResponse
			}
			msg = msg[k:]
			if field == 1 {
				status = Status(v)
			}
		case 2: // length-delimited, skipped
			l, k := binary.Uvarint(msg)
			if k <= 0 || uint64(len(msg)-k) < l {
				return 0, errNotResponse
			}
			msg = msg[k+int(l):]
		case 1: // fixed64
			if len(msg) < 8 {
				return 0, errNotResponse
			}
			msg = msg[8:]
		case 5: // fixed32
			if len(msg) < 4 {
				return 0, errNotResponse
			}
			msg = msg[4:]
		default:
			return 0, fmt.Errorf("the answer uses protobuf wire type %d", wire)
		}
	}
	return status, nil
}
