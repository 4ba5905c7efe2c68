package forgeapi

import (
	"strings"
	"testing"
)

func TestForgeMessage(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`, "Not Found"},
		{`{"message":"Validation Failed","errors":[{"resource":"Status","field":"state","code":"invalid"}]}`, "Validation Failed: state invalid"},
		{`{"message":"Validation Failed","errors":["description is too long"]}`, `Validation Failed: ["description is too long"]`},
		{`{"message":"Please try again later","url":"http://gitea/api/swagger"}`, "Please try again later"},
		{`{"message":{"name":["has already been taken"]}}`, `{"name":["has already been taken"]}`},
		{`{"error":"insufficient_scope","error_description":"The request requires higher privileges."}`, "insufficient_scope: The request requires higher privileges."},
		{`{"error":"404 Not Found"}`, "404 Not Found"},
		{"  upstream connect error  ", "upstream connect error"},
		{"", ""},
		{strings.Repeat("x", 1000), strings.Repeat("x", maxMessage) + "…"},
	} {
		if got := forgeMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("forgeMessage(%.60q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestNextLink(t *testing.T) {
	for header, want := range map[string]string{
		`<https://api.github.com/repositories/1/issues/2/comments?page=2>; rel="next", <https://api.github.com/repositories/1/issues/2/comments?page=5>; rel="last"`: "https://api.github.com/repositories/1/issues/2/comments?page=2",
		`<https://x/a?page=1>; rel="prev", <https://x/a?page=3>;rel=next`:                                                                                            "https://x/a?page=3",
		`<https://x/a?page=4>; rel="last"`:      "",
		`<https://x/a?page=2>; rel="next last"`: "https://x/a?page=2",
		``:                                      "",
		`garbage`:                               "",
	} {
		if got := nextLink(header); got != want {
			t.Errorf("nextLink(%q) = %q, want %q", header, got, want)
		}
	}
}
