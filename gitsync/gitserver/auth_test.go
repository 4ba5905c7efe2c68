package gitserver

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// do sends one request to the harness's server with the given Host
// header ("" keeps the server's address) and password ("" sends none).
func (h *harness) do(method, path, host, password string) (int, http.Header, string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.ts.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if password != "" {
		req.SetBasicAuth("anyone", password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

// repos lists the directories under the server's root.
func (h *harness) repos() []string {
	h.t.Helper()
	entries, err := os.ReadDir(h.srv.opts.Root)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// Every request needs the token; a refused one stores and creates
// nothing, and git, told 401 with a Basic challenge, retries with the
// password from its URL.
func TestAuthentication(t *testing.T) {
	h := newHarness(t, Options{})
	for _, tc := range []struct {
		method, path, password string
	}{
		{"GET", "/git/app.git/info/refs?service=git-receive-pack", ""},
		{"GET", "/git/app.git/info/refs?service=git-receive-pack", "wrong"},
		{"POST", "/git/app.git/git-receive-pack", ""},
		{"GET", "/git/app.git/info/refs?service=git-upload-pack", ""},
		{"POST", "/git/app.git/git-upload-pack", "wrong"},
		{"GET", "/git/Bad_Name/info/refs?service=git-upload-pack", ""}, // nothing learnt, not even the name's rules
	} {
		code, header, body := h.do(tc.method, tc.path, "", tc.password)
		if code != http.StatusUnauthorized || !strings.HasPrefix(header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("%s %s with password %q = %d (WWW-Authenticate %q) %q, want 401 with a Basic challenge",
				tc.method, tc.path, tc.password, code, header.Get("WWW-Authenticate"), body)
		}
	}
	if got := h.repos(); len(got) != 0 {
		t.Errorf("repositories after unauthenticated requests: %v, want none", got)
	}

	// Unauthenticated git gets nowhere and creates nothing.
	work := h.workRepo()
	h.commit(work, "a", "a")
	if out, err := h.run(work, "push", h.ts.URL+"/git/app.git", "main"); err == nil {
		t.Errorf("push without the token: %v\n%s", err, out)
	}
	if out, err := h.run(work, "push", strings.Replace(h.url("app"), testToken, "wrong", 1), "main"); err == nil {
		t.Errorf("push with a wrong token succeeded:\n%s", out)
	}
	if got := h.repos(); len(got) != 0 {
		t.Errorf("repositories after refused pushes: %v, want none", got)
	}

	// With the token, advertising refs for a push creates nothing yet.
	if code, _, body := h.do("GET", "/git/app.git/info/refs?service=git-receive-pack", "", testToken); code != http.StatusOK ||
		!strings.Contains(body, "# service=git-receive-pack") || !strings.Contains(body, "report-status") {
		t.Errorf("authenticated info/refs for a push to a new repository = %d %q, want an empty advertisement", code, body)
	}
	if got := h.repos(); len(got) != 0 {
		t.Errorf("repositories after an authenticated info/refs: %v, want none until a push", got)
	}

	// Any user name, the token as the password: the push creates it.
	h.git(work, "push", "-q", h.url("app"), "main")
	h.nextPush()
	if got := h.repos(); len(got) != 1 || got[0] != "app.git" {
		t.Errorf("repositories after a push: %v, want app.git", got)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := h.run("", "clone", "-q", h.ts.URL+"/git/app.git", clone); err == nil {
		t.Errorf("clone without the token succeeded:\n%s", out)
	}
	h.git("", "clone", "-q", h.url("app"), clone)

	// A bearer token works too (go-git's TokenAuth).
	req, _ := http.NewRequest("GET", h.ts.URL+"/git/app.git/info/refs?service=git-upload-pack", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("info/refs with a bearer token = %d, want 200", resp.StatusCode)
	}
}

// A Host header naming something else than the server (a browser page
// whose name was rebound to loopback) is refused before anything else.
func TestHostHeader(t *testing.T) {
	h := newHarness(t, Options{Hosts: []string{"git.example.com"}})
	work := h.workRepo()
	h.commit(work, "a", "a")
	h.git(work, "push", "-q", h.url("app"), "main")
	h.nextPush()

	path := "/git/app.git/info/refs?service=git-upload-pack"
	for host, want := range map[string]int{
		"":                           http.StatusOK, // 127.0.0.1:<port>
		"localhost:8090":             http.StatusOK,
		"LOCALHOST":                  http.StatusOK,
		"[::1]:8090":                 http.StatusOK,
		"git.example.com":            http.StatusOK,
		"git.example.com:443":        http.StatusOK,
		"attacker.example":           http.StatusMisdirectedRequest,
		"attacker.example:80":        http.StatusMisdirectedRequest,
		"localhost.attacker.example": http.StatusMisdirectedRequest,
		"10.0.0.1:8090":              http.StatusMisdirectedRequest, // not AnyIPHost
	} {
		for _, password := range []string{testToken, ""} {
			code, _, body := h.do("GET", path, host, password)
			if want == http.StatusMisdirectedRequest && code != want || want == http.StatusOK && password != "" && code != want {
				t.Errorf("Host %q (password %q) = %d %q, want %d", host, password, code, body, want)
			}
		}
	}

	ips := newHarness(t, Options{AnyIPHost: true})
	ips.git(work, "push", "-q", ips.url("app"), "main")
	ips.nextPush()
	for host, want := range map[string]int{
		"10.96.0.12:8090":   http.StatusOK, // a ClusterIP
		"[fd00::1]:8090":    http.StatusOK,
		"attacker.example":  http.StatusMisdirectedRequest,
		"10.96.0.12.nip.io": http.StatusMisdirectedRequest,
	} {
		if code, _, body := ips.do("GET", path, host, testToken); code != want {
			t.Errorf("AnyIPHost: Host %q = %d %q, want %d", host, code, body, want)
		}
	}
}
