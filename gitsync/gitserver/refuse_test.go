package gitserver

import (
	"bufio"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadCommands(t *testing.T) {
	const zero, one = ZeroSHA, "1111111111111111111111111111111111111111"
	pkt := func(s string) string {
		var b strings.Builder
		writePkt(&b, s)
		return b.String()
	}
	tests := []struct {
		name    string
		body    string
		want    pushCommands
		rest    string // what follows the commands, left unread
		invalid bool
	}{
		{name: "one ref with side-band-64k",
			body: pkt(zero+" "+one+" refs/heads/main\x00report-status side-band-64k quiet agent=git/2.39\n") + "0000PACK…",
			want: pushCommands{refs: []string{"refs/heads/main"}, sideband: true}, rest: "PACK…"},
		{name: "two refs, no side-band",
			body: pkt(zero+" "+one+" refs/heads/main\x00report-status\n") + pkt(one+" "+zero+" refs/heads/old\n") + "0000",
			want: pushCommands{refs: []string{"refs/heads/main", "refs/heads/old"}}},
		{name: "shallow lines name no ref",
			body: pkt("shallow "+one+"\n") + pkt(zero+" "+one+" refs/heads/main\x00side-band\n") + "0000",
			want: pushCommands{refs: []string{"refs/heads/main"}, sideband: true}},
		{name: "not pkt-lines", body: "PACK\x00\x00\x00\x02", invalid: true},
		{name: "cut short", body: pkt(zero + " " + one + " refs/heads/main\n")[:20], invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.body))
			raw, got, err := readCommands(r)
			if tc.invalid != (err != nil) {
				t.Fatalf("err = %v, want invalid %v", err, tc.invalid)
			}
			if tc.invalid {
				return
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(pushCommands{})); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			rest, _ := r.ReadString(0)
			if string(raw)+rest != tc.body || rest != tc.rest {
				t.Errorf("raw %q + rest %q, want the body back with %q after the commands", raw, rest, tc.rest)
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	cmds := pushCommands{refs: []string{"refs/heads/main", "refs/heads/x"}}
	report := "001aunpack over the limit\n" + "0026ng refs/heads/main over the limit\n" + "0023ng refs/heads/x over the limit\n" + "0000"
	if got := string(cmds.refusal("refused", "over the limit")); got != report {
		t.Errorf("refusal without side-band = %q, want %q", got, report)
	}
	cmds.sideband = true
	want := "000d\x02refused\n" + "006c\x01" + report + "0000"
	if got := string(cmds.refusal("refused", "over the limit")); got != want {
		t.Errorf("refusal with side-band = %q, want %q", got, want)
	}
}
