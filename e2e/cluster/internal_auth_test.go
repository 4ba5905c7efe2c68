//go:build cluster

package cluster

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	servingv1 "github.com/knitops/knit/api/serving/v1"
	"github.com/knitops/knit/controllers/revision/resources"
	"github.com/knitops/knit/dataplane/activator"
	"github.com/knitops/knit/dataplane/queue"
	"github.com/knitops/knit/internal/hopauth"
)

// forwarded matches kubectl port-forward's "Forwarding from
// 127.0.0.1:<port> -> <port>".
var forwarded = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)

// portForward runs kubectl port-forward to target's port in ns until the
// test ends and returns the local address.
func (k *cluster) portForward(ns, target string, port int) string {
	k.t.Helper()
	cmd := exec.Command(filepath.Join(k.root, "bin", "kubectl"), "port-forward", "-n", ns, "--address", "127.0.0.1", target, "0:"+strconv.Itoa(port))
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+k.kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		k.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	k.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := forwarded.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() { // keep draining its output
				}
			}()
			return "127.0.0.1:" + m[1]
		}
	}
	k.t.Fatalf("kubectl port-forward %s/%s %d printed no local port", ns, target, port)
	return ""
}

func (k *cluster) do(method, url string, header http.Header, body string) int {
	k.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		k.t.Fatal(err)
	}
	req.Header = header
	resp, err := k.http.Do(req)
	if err != nil {
		k.t.Fatalf("%s %s: %v", method, url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// internalEndpoints: a caller that is not one of knit's components gets
// nothing from the autoscaler's report endpoint, the activator or a
// replica's admin port. The cluster's images hold no HTTP client to run
// in a user's pod, so the test calls through kubectl port-forward; the
// refusals are the components' own (the test cluster's bridge CNI
// enforces no NetworkPolicy), so where the call comes from changes
// nothing.
func (j *journey) internalEndpoints(t *testing.T) {
	rev := j.revisions[0]

	// The autoscaler: no token, no report heard.
	autoscaler := j.portForward(systemNamespace, "svc/knit-autoscaler", 8080)
	stats := fmt.Sprintf(`{"stats":[{"namespace":%q,"name":%q,"averageConcurrency":1000,"requestsPerSecond":1000}]}`, ns, rev)
	if code := j.do(http.MethodPost, "http://"+autoscaler+activator.StatsPath, http.Header{"Content-Type": {"application/json"}}, stats); code != http.StatusUnauthorized {
		t.Errorf("unauthenticated stats to the autoscaler: %d, want 401", code)
	}
	poke := fmt.Sprintf(`{"revisions":[{"namespace":%q,"name":%q}]}`, ns, rev)
	if code := j.do(http.MethodPost, "http://"+autoscaler+activator.PokePath, http.Header{"Content-Type": {"application/json"}}, poke); code != http.StatusUnauthorized {
		t.Errorf("unauthenticated poke to the autoscaler: %d, want 401", code)
	}

	// The activator: naming a Revision is not enough without the
	// ingress's signature.
	act := j.portForward(systemNamespace, "svc/knit-activator", 80)
	h := http.Header{activator.NamespaceHeader: {ns}, activator.RevisionHeader: {rev}}
	if code := j.do(http.MethodGet, "http://"+act+"/", h, ""); code != http.StatusForbidden {
		t.Errorf("a request straight to the activator naming %s/%s: %d, want 403", ns, rev, code)
	}
	h.Set(hopauth.RouteHeader, "v1."+strconv.FormatInt(time.Now().Unix(), 10)+".forged")
	if code := j.do(http.MethodGet, "http://"+act+"/", h, ""); code != http.StatusForbidden {
		t.Errorf("a request to the activator with a forged signature: %d, want 403", code)
	}

	// A replica's admin port: /wait-for-drain from anyone leaves the
	// replica ready while the call waits and after.
	pods, err := j.pods(context.Background(), ns, map[string]string{servingv1.RevisionLabelKey: rev})
	if err != nil || readyPods(pods) == 0 {
		t.Fatalf("ready pods of %s: %v (%d)", rev, err, readyPods(pods))
	}
	admin := "http://" + j.portForward(ns, "pod/"+pods[0].Name, resources.QueueAdminPort)
	done := make(chan int, 1)
	go func() {
		resp, err := j.http.Get(admin + queue.DrainPath)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	// Bounded in count and time: the call returns within a second or so;
	// the checks are paced, since a check through the port-forward may
	// take a millisecond and 200 of them would not wait that long.
	for i := 0; i < 200; i++ {
		if code := j.do(http.MethodGet, admin+queue.HealthPath, http.Header{}, ""); code != http.StatusOK {
			t.Fatalf("replica health while a foreign /wait-for-drain waits: %d, want 200", code)
		}
		select {
		case <-time.After(50 * time.Millisecond):
			continue
		case code := <-done:
			if code != http.StatusOK {
				t.Errorf("%s: %d, want 200 (it waited and changed nothing)", queue.DrainPath, code)
			}
			if code := j.do(http.MethodGet, admin+queue.HealthPath, http.Header{}, ""); code != http.StatusOK {
				t.Errorf("replica health after a foreign %s: %d, want 200", queue.DrainPath, code)
			}
			j.waitBody(j.ingress, j.host("hello"), "Hello cluster!", time.Minute)
			return
		}
	}
	t.Errorf("%s did not return within 10s", queue.DrainPath)
}
