package buildkit

import (
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// With a proxy, a build's steps get it under both spellings, and a
// user's own proxy arguments (in any case) give way to it; without one,
// the user's pass as written.
func TestBuildctlArgsPointStepsAtTheProxy(t *testing.T) {
	spec := Spec{Context: "/ctx", File: "Dockerfile", Repository: "r", Args: map[string]string{
		"Http_Proxy": "http://elsewhere:8080", "https_proxy": "http://elsewhere:8080", "NO_PROXY": "internal", "VERSION": "1",
	}}
	for _, tc := range []struct {
		proxy      string
		want, gone []string
	}{
		{proxy: "http://169.254.62.1:3128",
			want: []string{"build-arg:HTTP_PROXY=http://169.254.62.1:3128", "build-arg:HTTPS_PROXY=http://169.254.62.1:3128",
				"build-arg:http_proxy=http://169.254.62.1:3128", "build-arg:https_proxy=http://169.254.62.1:3128",
				"build-arg:NO_PROXY=internal", "build-arg:VERSION=1"},
			gone: []string{"elsewhere"}},
		{proxy: "",
			want: []string{"build-arg:Http_Proxy=http://elsewhere:8080", "build-arg:https_proxy=http://elsewhere:8080", "build-arg:VERSION=1"},
			gone: []string{"3128"}},
	} {
		args := buildctlArgs("/sock", spec, "reg/r:t", "/meta", tc.proxy)
		for _, w := range tc.want {
			if !slices.Contains(args, w) {
				t.Errorf("proxy %q: args %q lack %q", tc.proxy, args, w)
			}
		}
		for _, g := range tc.gone {
			if strings.Contains(strings.Join(args, " "), g) {
				t.Errorf("proxy %q: args %q name %q", tc.proxy, args, g)
			}
		}
	}
}

// The steps' network has no route out of the subnet and no gateway or
// masquerading on this machine: what keeps a step from going around the
// proxy.
func TestStepConflistRoutesNowhere(t *testing.T) {
	b, err := stepConflist("knb01234567", DefaultStepSubnet, "/state/cni-ipam")
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []struct {
			Type, Bridge      string
			IsGateway, IPMasq bool
			IsDefaultGateway  bool
			IPAM              struct {
				Type, DataDir string
				Routes        []any
				Ranges        [][]map[string]string
			}
		}
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(conf.Plugins) != 1 {
		t.Fatalf("plugins %+v, want the bridge alone", conf.Plugins)
	}
	p := conf.Plugins[0]
	if p.Type != "bridge" || p.Bridge != "knb01234567" || p.IsGateway || p.IPMasq || p.IsDefaultGateway || p.IPAM.Type != "host-local" || len(p.IPAM.Routes) != 0 {
		t.Errorf("bridge plugin %+v: want bridge knb01234567, no gateway, no masquerade, host-local with no routes", p)
	}
	if r := p.IPAM.Ranges; len(r) != 1 || len(r[0]) != 1 || r[0][0]["subnet"] != "169.254.62.0/24" || r[0][0]["gateway"] != "169.254.62.1" {
		t.Errorf("ranges %v, want 169.254.62.0/24 with the proxy's .1 as gateway", r)
	}
}

func TestCheckStepSubnet(t *testing.T) {
	for s, ok := range map[string]bool{
		"169.254.62.0/24": true, "10.250.0.0/16": true, "192.168.77.16/28": true,
		"10.0.0.0/8": false, "192.168.77.0/30": false, "192.168.77.1/24": false, "fd00::/64": false,
	} {
		if err := checkStepSubnet(netip.MustParsePrefix(s)); (err == nil) != ok {
			t.Errorf("checkStepSubnet(%s) = %v, want ok=%v", s, err, ok)
		}
	}
	if b, v := stepLinks("/some/state/dir"); len(b) > 15 || len(v) > 15 || b == v {
		t.Errorf("links %q, %q: want two names of 15 bytes at most", b, v)
	}
}
