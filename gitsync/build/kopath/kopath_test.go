package kopath

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func TestPackage(t *testing.T) {
	tests := []struct {
		image, want string
		refused     string // part of the error; "" when accepted
	}{
		{image: "ko://./cmd/hello", want: "./cmd/hello"},
		{image: "ko://.", want: "."},
		{image: "ko://./", want: "./"},
		{image: "ko://./v2", want: "./v2"},
		{image: "ko://github.com/knitops/knit/cmd/knit", want: "github.com/knitops/knit/cmd/knit"},
		{image: "ko://example.com/tool/v2", want: "example.com/tool/v2"},
		{image: "ko://shop/cmd/hello", want: "shop/cmd/hello"},
		{image: "ko://gopkg.in/yaml.v3", want: "gopkg.in/yaml.v3"},
		{image: "ko://./cmd/c++_tool~x", want: "./cmd/c++_tool~x"},

		{image: "ko://-toolexec=/bin/sh", refused: "starts with '-'"},
		{image: "ko://-o=/etc/passwd", refused: "starts with '-'"},
		{image: "ko://./-toolexec=x", refused: "starts with '-'"},
		{image: "ko://./cmd/-x", refused: "starts with '-'"},
		{image: "ko://./cmd/hello -toolexec=x", refused: "character ' '"},
		{image: "ko://./cmd\t-x", refused: "character '\\t'"},
		{image: "ko://../other", refused: "only dots"},
		{image: "ko://./../other", refused: "only dots"},
		{image: "ko://./cmd/../../x", refused: "only dots"},
		{image: "ko://./...", refused: "only dots"},
		{image: "ko://./cmd/...", refused: "only dots"},
		{image: "ko://all", refused: "pattern names"},
		{image: "ko://std", refused: "pattern names"},
		{image: "ko:///etc/passwd", refused: "empty path element"},
		{image: "ko://./cmd//x", refused: "empty path element"},
		{image: "ko://./cmd/hello/", refused: "trailing slash"},
		{image: "ko://example.com/x@latest", refused: "character '@'"},
		{image: "ko://example.com/x=y", refused: "character '='"},
		{image: "ko://example.com/x.", refused: "ends with a dot"},
		{image: "ko://..0", refused: "starts with a dot"},
		{image: "ko://./.git/hooks", refused: "starts with a dot"},
		{image: "ko://", refused: "empty"},
		{image: "ko://\xff", refused: "UTF-8"},
		{image: "ko://" + strings.Repeat("a", 600), refused: "longer than"},
		{image: "ko://./cmd/héllo", refused: "character 'é'"},
		{image: "docker.io/library/nginx", refused: "does not start with ko://"},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			got, err := Package(tt.image)
			if tt.refused == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Package(%q) = %q, %v; want %q", tt.image, got, err, tt.want)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.refused) {
				t.Fatalf("Package(%q) = %q, %v; want ErrInvalid saying %q", tt.image, got, err, tt.refused)
			}
		})
	}
}

// FuzzCheck: whatever Check accepts is one argument no go command reads
// as a flag or a pattern, and stays inside the repository.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"./cmd/hello", ".", "./", "example.com/x/v2", "-toolexec=x", "../x", "./...", "all", "a b", "./a/../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pkg string) {
		if Check(pkg) != nil {
			return
		}
		if strings.HasPrefix(pkg, "-") || strings.ContainsAny(pkg, " \t\r\n=@\\\x00") || strings.Contains(pkg, "...") {
			t.Fatalf("Check accepted %q", pkg)
		}
		if pkg == "." || pkg == "./" {
			return
		}
		if r := strings.TrimPrefix(pkg, "./"); path.Clean(r) != r || strings.HasPrefix(path.Clean(r), "..") {
			t.Fatalf("Check accepted %q, which is not clean or leaves the repository", pkg)
		}
		if reserved[pkg] {
			t.Fatalf("Check accepted the pattern %q", pkg)
		}
	})
}
