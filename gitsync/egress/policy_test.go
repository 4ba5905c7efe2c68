package egress

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRules(t *testing.T) {
	got, err := ParseRules("127.0.0.1:8090, 10.0.0.0/8\n::1 [fe80::1]:443\tgit.Example.com. sinks.internal:8080 192.168.1.7/24")
	if err != nil {
		t.Fatal(err)
	}
	var strs []string
	for _, r := range got {
		strs = append(strs, r.String())
	}
	want := []string{"127.0.0.1:8090", "10.0.0.0/8", "::1", "[fe80::1]:443", "git.example.com", "sinks.internal:8080", "192.168.1.0/24"}
	if diff := cmp.Diff(want, strs); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	// ".", "a..b" and "host..": names with an empty label, which read
	// back as other rules (found by FuzzParseRules).
	for _, bad := range []string{"127.0.0.1:0", "host:http", "10.0.0.0/33", "a/b", "under_score.example", ".", "a..b", "host..", ".lead"} {
		if _, err := ParseRules(bad); err == nil {
			t.Errorf("ParseRules(%q) accepted it", bad)
		}
	}
}

func TestCheckURL(t *testing.T) {
	allow, err := ParseRules("127.0.0.1:8090, 10.1.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Allow: allow, Deny: []netip.Prefix{netip.MustParsePrefix("192.0.2.10/32")}}
	tests := []struct {
		url  string
		want string // "" for allowed, else the DeniedError's message
	}{
		{"https://hooks.example.com/knit", ""},
		{"HTTP://10.96.0.20/events", ""},
		{"http://sink.default.svc.cluster.local:8080", ""}, // a name: checked when dialled
		{"http://127.0.0.1:8090/git/hello.git", ""},        // allowed by the rule
		{"http://10.1.2.3/events", ""},                     // allowed, though not refused anyway
		{"http://127.0.0.1:2379/v3/kv/range", "egress to 127.0.0.1:2379 refused: 127.0.0.1 is a loopback address; an operator can allow it in ConfigMap knit-system/config-network, key egress-allow"},
		{"http://[::1]:8443/validate", "egress to [::1]:8443 refused: ::1 is a loopback address; " + allowHint},
		{"http://[::ffff:127.0.0.1]/", "egress to 127.0.0.1:80 refused: 127.0.0.1 is a loopback address; " + allowHint},
		{"http://169.254.169.254/latest/meta-data/", "egress to 169.254.169.254:80 refused: 169.254.169.254 is a link-local address, where cloud metadata services answer; " + allowHint},
		{"http://[fd00:ec2::254]/", "egress to [fd00:ec2::254]:80 refused: fd00:ec2::254 is a cloud metadata service's address; " + allowHint},
		{"http://0.0.0.0:8080/", "egress to 0.0.0.0:8080 refused: 0.0.0.0 is an unspecified address, which reaches the local host; " + allowHint},
		{"https://192.0.2.10/", "egress to 192.0.2.10:443 refused: 192.0.2.10 is an address of knit's own control plane; " + allowHint},
		{"file:///etc/passwd", `egress to file:///etc/passwd refused: scheme "file" is not http or https; knit connects to http and https URLs only`},
		{"gopher://example.com:70/", `egress to gopher://example.com:70/ refused: scheme "gopher" is not http or https; knit connects to http and https URLs only`},
		{"ssh://git@example.com/o/r.git", `egress to ssh://git@example.com/o/r.git refused: scheme "ssh" is not http or https; knit connects to http and https URLs only`},
		{"/srv/git/hello", `egress to "/srv/git/hello" refused: it is not an absolute http or https URL; knit connects to http and https URLs only`},
		{"git@github.com:o/r.git", `egress to "git@github.com:o/r.git" refused: it is not a URL; knit connects to http and https URLs only`},
		{"https://user:secret@127.0.0.1/", "egress to 127.0.0.1:443 refused: 127.0.0.1 is a loopback address; " + allowHint},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			err := p.CheckURL(tc.url)
			got := ""
			if err != nil {
				got = err.Error()
				var denied *DeniedError
				if !errors.As(err, &denied) {
					t.Errorf("error %T is not a *DeniedError", err)
				}
			}
			if got != tc.want {
				t.Errorf("CheckURL = %q\nwant       %q", got, tc.want)
			}
		})
	}
	if err := (&Policy{Schemes: []string{"file"}}).CheckURL("file:///srv/git/hello"); err != nil {
		t.Errorf("a policy allowing file: %v", err)
	}
}

func TestCheckAddrRules(t *testing.T) {
	allow, err := ParseRules("localhost:9000, 127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	p := &Policy{Allow: allow}
	tests := []struct {
		host    string
		addr    string
		allowed bool
	}{
		{"localhost", "127.0.0.1:9000", true},     // the name and port the rule names
		{"LOCALHOST.", "127.0.0.1:9000", true},    // names match as DNS does
		{"localhost", "127.0.0.1:9001", false},    // another port
		{"evil.example", "127.0.0.1:9000", false}, // another name resolving to loopback
		{"", "127.0.0.2:22", true},                // an address rule, any port
		{"", "127.0.0.1:9000", false},             // the address, not through the allowed name
		{"", "93.184.215.14:443", true},           // not refused at all
	}
	for _, tc := range tests {
		err := p.CheckAddr(tc.host, netip.MustParseAddrPort(tc.addr))
		if (err == nil) != tc.allowed {
			t.Errorf("CheckAddr(%q, %s) = %v, want allowed %v", tc.host, tc.addr, err, tc.allowed)
		}
	}
}
