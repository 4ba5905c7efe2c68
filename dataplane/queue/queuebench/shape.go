package queuebench

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Shape is a kind of request the load generator sends and the app
// answers. GET is the small request every proxy optimises for; the
// others are what a queue-proxy also carries: a request body, a large
// streamed answer, and HTTP/2 cleartext end to end (gRPC's transport).
type Shape string

const (
	// ShapeGet is a body-less GET answered with AppBody (Content-Length).
	ShapeGet Shape = "get"
	// ShapePost is a POST of PostBodyBytes that the app reads whole and
	// answers with AppBody.
	ShapePost Shape = "post-4k"
	// ShapeStream is a GET the app answers with StreamBytes written in
	// StreamChunkBytes chunks, each flushed: chunked transfer encoding.
	ShapeStream Shape = "stream-1m"
	// ShapeH2C is a GET over HTTP/2 cleartext with prior knowledge, which
	// the app answers only when it too arrived over HTTP/2.
	ShapeH2C Shape = "h2c"
	// ShapeGet64K is a body-less GET answered with LargeBytes
	// (Content-Length): a page or an API answer of some size.
	ShapeGet64K Shape = "get-64k"
)

// Sizes and app paths of the shapes.
const (
	PostBodyBytes    = 4 << 10
	StreamBytes      = 1 << 20
	StreamChunkBytes = 16 << 10
	LargeBytes       = 64 << 10

	PostPath   = "/post"
	StreamPath = "/stream"
	H2CPath    = "/h2c"
	LargePath  = "/64k"
)

// Shapes are the shapes the request-path part measures, GET first.
func Shapes() []Shape { return []Shape{ShapeGet, ShapePost, ShapeStream, ShapeH2C} }

// EdgeShapes are the shapes a user sends through an edge proxy, as the
// edge part measures them over any protocol.
func EdgeShapes() []Shape { return []Shape{ShapeGet, ShapeGet64K, ShapePost} }

// Label is the shape as a report names it.
func (s Shape) Label() string {
	switch s {
	case ShapeGet, "":
		return "GET"
	case ShapePost:
		return "POST 4 KiB"
	case ShapeStream:
		return "GET streamed 1 MiB"
	case ShapeH2C:
		return "h2c GET"
	case ShapeGet64K:
		return "GET 64 KiB"
	}
	return string(s)
}

// ParseShape is the shape named s.
func ParseShape(s string) (Shape, error) {
	for _, sh := range append(Shapes(), ShapeGet64K) {
		if string(sh) == s {
			return sh, nil
		}
	}
	return "", fmt.Errorf("unknown request shape %q", s)
}

// path is the app path a shape's request goes to; empty keeps the URL's.
func (s Shape) path() string {
	switch s {
	case ShapePost:
		return PostPath
	case ShapeStream:
		return StreamPath
	case ShapeH2C:
		return H2CPath
	case ShapeGet64K:
		return LargePath
	}
	return ""
}

// wantBody is how many body bytes a 200 answer to the shape carries.
func (s Shape) wantBody() int64 {
	switch s {
	case ShapeStream:
		return StreamBytes
	case ShapeGet64K:
		return LargeBytes
	}
	return int64(len(AppBody))
}

// streamChunk is one chunk of the streamed answer, largeBody the large
// one.
var (
	streamChunk = make([]byte, StreamChunkBytes)
	largeBody   = make([]byte, LargeBytes)
)

// App is the trivial app every path reaches: AppBody for a GET, and the
// shapes' answers on their paths. It refuses what a shape's request
// should not look like when it arrives (a body short of PostBodyBytes,
// HTTP/1 on H2CPath), so a proxy that changes the request shows up as
// errors in the load generator's counts.
func App() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case PostPath:
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil || n != PostBodyBytes || r.Method != http.MethodPost {
				http.Error(w, fmt.Sprintf("want a POST of %d bytes, got %s of %d (%v)", PostBodyBytes, r.Method, n, err), http.StatusBadRequest)
				return
			}
		case StreamPath:
			stream(w)
			return
		case LargePath:
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.Itoa(LargeBytes))
			w.Write(largeBody)
			return
		case H2CPath:
			if r.ProtoMajor != 2 {
				http.Error(w, "want HTTP/2 end to end, got "+r.Proto, http.StatusHTTPVersionNotSupported)
				return
			}
		}
		writeAppBody(w)
	})
}

func writeAppBody(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(AppBody)))
	io.WriteString(w, AppBody)
}

// stream writes StreamBytes with no Content-Length, flushing every
// chunk, so the answer goes out chunked as it is written.
func stream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/octet-stream")
	rc := http.NewResponseController(w)
	for range StreamBytes / StreamChunkBytes {
		if _, err := w.Write(streamChunk); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
