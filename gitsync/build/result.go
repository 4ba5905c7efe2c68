package build

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Result is what the builder writes as its termination message (at most
// 4 KiB, the kubelet's limit): the image it pushed, or the lines that say
// why it could not, and how long each step took. The builder
// (hack/images/cmd/knit-builder) writes the same JSON.
type Result struct {
	// Image is the pushed image, <repository>@sha256:<digest>.
	Image string `json:"image,omitempty"`
	// Error is why the build failed: the compiler's first error lines, or
	// the step that failed and its error.
	Error string `json:"error,omitempty"`
	// Fetch, Compile and Push are the steps' durations ("1.5s").
	Fetch   string `json:"fetch,omitempty"`
	Compile string `json:"compile,omitempty"`
	Push    string `json:"push,omitempty"`
	// Reused says the registry already held the key's image, so nothing
	// was compiled or pushed.
	Reused bool `json:"reused,omitempty"`
}

// ParseResult reads a builder's termination message.
func ParseResult(message string) (Result, error) {
	var r Result
	if err := json.Unmarshal([]byte(strings.TrimSpace(message)), &r); err != nil {
		return Result{}, fmt.Errorf("read the builder's result %q: %w", truncate(message, 200), err)
	}
	if r.Image == "" && r.Error == "" {
		return Result{}, fmt.Errorf("the builder's result names neither an image nor an error: %q", truncate(message, 200))
	}
	if r.Image != "" && !strings.Contains(r.Image, "@sha256:") {
		return Result{}, fmt.Errorf("the builder pushed %q, not an image by digest", r.Image)
	}
	return r, nil
}

// Durations is the steps' durations for status.builds, e.g.
// "fetch=0.4s compile=3.1s push=0.2s".
func (r Result) Durations() string {
	var parts []string
	for _, s := range []struct{ name, d string }{{"fetch", r.Fetch}, {"compile", r.Compile}, {"push", r.Push}} {
		if s.d != "" {
			parts = append(parts, s.name+"="+s.d)
		}
	}
	if r.Reused {
		parts = append(parts, "reused")
	}
	return strings.Join(parts, " ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
