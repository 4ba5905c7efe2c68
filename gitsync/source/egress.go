package source

import (
	"context"
	"net/http"
	"slices"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/knitops/knit/gitsync/egress"
)

// guardOnce installs, once per process, go-git's http and https
// transports on connections egress.DialContext checks. go-git picks its
// transport per scheme, process-wide; this one checks only requests whose
// context carries a policy (guard puts the Cache's there), so any other
// go-git use in the process connects as before.
var guardOnce sync.Once

// guard refuses url when the Cache's egress policy does, and returns ctx
// carrying the policy for the connections the fetch makes.
func (c *Cache) guard(ctx context.Context, url string) (context.Context, error) {
	p := &egress.Policy{}
	if c.Egress != nil {
		p = c.Egress()
	}
	check := p
	if IsSSH(url) {
		// ssh is no scheme of the policy, whose other users speak
		// HTTP: Git allows it here, and SSHAuthFromSecret checks the
		// address each connection reaches.
		c := *p
		c.Schemes = append(slices.Clone(p.Schemes), "ssh")
		check = &c
	}
	if err := check.CheckURL(SSHURL(url)); err != nil {
		return ctx, err
	}
	guardOnce.Do(func() {
		t := githttp.NewClient(&http.Client{Transport: egress.Transport(nil)})
		client.InstallProtocol("http", t)
		client.InstallProtocol("https", t)
	})
	return egress.WithPolicy(ctx, p), nil
}
