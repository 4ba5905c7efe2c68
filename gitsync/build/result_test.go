package build

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestParseResult(t *testing.T) {
	tests := []struct {
		name, message string
		want          Result
		durations     string
		err           string
	}{{
		name:      "pushed, as the builder writes it",
		message:   `{"image":"10.250.0.2:5000/default/shop/hello@sha256:abc","fetch":"0.4s","compile":"3.1s","push":"0.2s"}` + "\n",
		want:      Result{Image: "10.250.0.2:5000/default/shop/hello@sha256:abc", Fetch: "0.4s", Compile: "3.1s", Push: "0.2s"},
		durations: "fetch=0.4s compile=3.1s push=0.2s",
	}, {
		name:      "compile error",
		message:   `{"error":"./main.go:5:2: undefined: fmt.Printn","fetch":"0.3s","compile":"1s"}`,
		want:      Result{Error: "./main.go:5:2: undefined: fmt.Printn", Fetch: "0.3s", Compile: "1s"},
		durations: "fetch=0.3s compile=1s",
	}, {
		name:      "reused",
		message:   `{"image":"r/a@sha256:1","fetch":"0.1s","reused":true}`,
		want:      Result{Image: "r/a@sha256:1", Fetch: "0.1s", Reused: true},
		durations: "fetch=0.1s reused",
	}, {
		name: "not JSON", message: "panic: runtime error", err: "read the builder's result",
	}, {
		name: "empty object", message: "{}", err: "neither an image nor an error",
	}, {
		name: "a tag, not a digest", message: `{"image":"r/a:latest"}`, err: "not an image by digest",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseResult(tt.message)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseResult error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseResult = %+v, want %+v", got, tt.want)
			}
			if d := got.Durations(); d != tt.durations {
				t.Errorf("Durations = %q, want %q", d, tt.durations)
			}
		})
	}
}

// The compile step runs the user's build: an image it names is ignored,
// and only the push step's counts.
func TestPodResultTakesTheImageFromThePushStep(t *testing.T) {
	term := func(name, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: msg}}}
	}
	pod := &corev1.Pod{Status: corev1.PodStatus{
		InitContainerStatuses: []corev1.ContainerStatus{term(fetchStep, `{"fetch":"0.2s"}`), term(compileStep, `{"compile":"1s","image":"evil/x@sha256:1"}`)},
	}}
	if res, ok := PodResult(pod); ok || res.Image != "" {
		t.Fatalf("PodResult before the push = %+v, %v; want no result", res, ok)
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{term(containerLog, `{"image":"r/ns/shop/hello@sha256:2","push":"0.1s"}`)}
	res, ok := PodResult(pod)
	if !ok || res.Image != "r/ns/shop/hello@sha256:2" || res.Durations() != "fetch=0.2s compile=1s push=0.1s" {
		t.Errorf("PodResult = %+v, %v", res, ok)
	}
	pod.Status.InitContainerStatuses[1] = term(compileStep, `{"error":"main.go:1: bad","compile":"1s"}`)
	pod.Status.ContainerStatuses = nil
	if res, ok := PodResult(pod); !ok || res.Error != "main.go:1: bad" || res.Image != "" {
		t.Errorf("PodResult of a failed compile = %+v, %v", res, ok)
	}
}
