package controlplane

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// etcdMember is the single-member etcd knit dev stores its objects in.
type etcdMember struct {
	dataDir    string
	clientPort int
	peerPort   int
}

func (e etcdMember) clientURL() string { return "http://127.0.0.1:" + strconv.Itoa(e.clientPort) }

// args configures a one-member cluster on loopback. The initial-* flags
// only matter the first time; later runs read membership from the data
// dir, which is why a new peer port each run is harmless.
//
// fsync is off: knit dev's real source of truth is Git, etcd's data is
// lost only if the machine (not knit) crashes, and fsync makes every write
// slow on laptop disks.
func (e etcdMember) args() []string {
	peerURL := "http://127.0.0.1:" + strconv.Itoa(e.peerPort)
	return []string{
		"--name=knit",
		"--data-dir=" + e.dataDir,
		"--listen-client-urls=" + e.clientURL(),
		"--advertise-client-urls=" + e.clientURL(),
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=knit=" + peerURL,
		"--unsafe-no-fsync=true",
	}
}

// probe asks etcd's /health endpoint, which answers true once the member
// has a leader and serves reads.
func (e etcdMember) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.clientURL()+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("etcd /health: %s %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
