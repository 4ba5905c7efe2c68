package build

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
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
	// Fetch, Compile, Build and Push are the steps' durations ("1.5s").
	Fetch   string `json:"fetch,omitempty"`
	Compile string `json:"compile,omitempty"`
	// Build is a dockerfile:// build's BuildKit step, in place of
	// Compile.
	Build string `json:"build,omitempty"`
	Push  string `json:"push,omitempty"`
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
	for _, s := range []struct{ name, d string }{{"fetch", r.Fetch}, {"compile", r.Compile}, {"build", r.Build}, {"push", r.Push}} {
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

// PodResult merges the results a build pod's steps left, in the order
// they ran: the steps' durations, the first step's error, and the image
// from the push step alone — the compile step runs the user's build and
// could write any message, so an image it names is ignored. ok is false
// while no step has said how the build ended.
func PodResult(pod *corev1.Pod) (res Result, ok bool) {
	statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if cs.State.Terminated == nil || cs.State.Terminated.Message == "" {
			continue
		}
		var step Result
		if err := json.Unmarshal([]byte(strings.TrimSpace(cs.State.Terminated.Message)), &step); err != nil {
			return Result{Error: fmt.Sprintf("read the builder's result (%s step) %q: %v", cs.Name, truncate(cs.State.Terminated.Message, 200), err)}, true
		}
		res.Fetch, res.Compile, res.Push = first(res.Fetch, step.Fetch), first(res.Compile, step.Compile), first(res.Push, step.Push)
		res.Build = first(res.Build, step.Build)
		if step.Error != "" {
			res.Error = step.Error
			return res, true
		}
		if cs.Name == containerLog && step.Image != "" {
			res.Image = step.Image
		}
	}
	if res.Image == "" {
		return res, false
	}
	if !strings.Contains(res.Image, "@sha256:") {
		return Result{Error: fmt.Sprintf("the builder pushed %q, not an image by digest", res.Image)}, true
	}
	return res, true
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
