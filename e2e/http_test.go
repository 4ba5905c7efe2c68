//go:build !unit

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/knitops/knit/internal/poll"
)

// get sends one request for host through the ingress at addr; *.localhost
// needs no DNS, but the test pins the connection to the ingress anyway.
func get(addr, host string) (int, string, error) { return getPath(addr, host, "/") }

// getPath is get for another path than /.
func getPath(addr, host, path string) (int, string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return 0, "", err
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(body)), err
}

// waitBody polls host until it answers 200 with want, or fails after the timeout.
func waitBody(t *testing.T, addr, host, want string, timeout time.Duration) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		code, body, err := get(addr, host)
		last = fmt.Sprintf("%d %q %v", code, body, err)
		return code == http.StatusOK && body == want, nil
	})
	if err != nil {
		t.Fatalf("%s did not answer %q within %s; last: %s", host, want, timeout, last)
	}
}

// waitFor polls cond with a timeout, reporting cond's last explanation.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func(ctx context.Context) (bool, string)) {
	t.Helper()
	poll.Until(t, what, 200*time.Millisecond, timeout, cond)
}
