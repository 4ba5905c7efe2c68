package podlogs

import (
	"errors"
	"fmt"
	"net/http"
)

// Source finds the log of one container. previous asks for the log of the
// container's run before the current one, as `kubectl logs --previous`.
type Source interface {
	ContainerLog(namespace, pod, container string, previous bool) (Log, error)
}

// Log is a byte range of a log file.
type Log struct {
	Path string
	// From and To bound the range: From is where the run began (several
	// runs of a container may share a file), To < 0 means the end of the
	// file, wherever it is when read.
	From, To int64
	// Live is open while something still writes to the range (follow waits
	// for more), closed or nil once nothing does.
	Live <-chan struct{}
}

// Error is a refusal the client sees with its status code, in the
// kubelet's words.
type Error struct {
	Code    int
	Message string
}

func (e *Error) Error() string { return e.Message }

// PodNotFound is the kubelet's answer for a pod it does not run.
func PodNotFound(pod string) error {
	return &Error{Code: http.StatusNotFound, Message: fmt.Sprintf("pod %q does not exist", pod)}
}

// ContainerNotFound is the kubelet's answer for a container the pod lacks.
func ContainerNotFound(container, pod string) error {
	return &Error{Code: http.StatusNotFound, Message: fmt.Sprintf("container %q not found in pod %q", container, pod)}
}

// PreviousNotFound is the kubelet's answer to --previous for a container
// that has not restarted.
func PreviousNotFound(container, pod string) error {
	return &Error{Code: http.StatusBadRequest, Message: fmt.Sprintf("previous terminated container %q in pod %q not found", container, pod)}
}

// statusOf is the HTTP status of err: its own for an Error, else 500.
func statusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return http.StatusInternalServerError
}
