package dockerfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		image string
		want  Ref
		err   string // part of the error; "" for none
	}{
		{image: "dockerfile://./web", want: Ref{Dir: "web", File: "Dockerfile"}},
		{image: "dockerfile://./", want: Ref{Dir: ".", File: "Dockerfile"}},
		{image: "dockerfile://.", want: Ref{Dir: ".", File: "Dockerfile"}},
		{image: "dockerfile://./apps/api_v2?target=runtime&file=build/Dockerfile.prod&build-arg=VERSION=1.2&build-arg=EMPTY=",
			want: Ref{Dir: "apps/api_v2", File: "build/Dockerfile.prod", Target: "runtime", Args: map[string]string{"VERSION": "1.2", "EMPTY": ""}}},
		{image: "dockerfile://./web?build-arg=GREETING=hello%20world%26more", want: Ref{Dir: "web", File: "Dockerfile", Args: map[string]string{"GREETING": "hello world&more"}}},
		{image: "ko://./web", err: "does not start with dockerfile://"},
		{image: "dockerfile://", err: "directory is empty"},
		{image: "dockerfile://web", err: "must start with ./"},
		{image: "dockerfile:///etc", err: "must start with ./"},
		{image: "dockerfile://./../secrets", err: "only dots"},
		{image: "dockerfile://./web/../../x", err: "only dots"},
		{image: "dockerfile://./.git", err: "starts with"},
		{image: "dockerfile://./-rf", err: "starts with"},
		{image: "dockerfile://./web//x", err: "double slash"},
		{image: "dockerfile://./web/", err: "trailing slash"},
		{image: "dockerfile://./we b", err: "character"},
		{image: "dockerfile://./web?file=../Dockerfile", err: "only dots"},
		{image: "dockerfile://./web?file=/etc/passwd", err: "absolute"},
		{image: "dockerfile://./web?target=--output=x", err: "stage name"},
		{image: "dockerfile://./web?target=a&target=b", err: "stage name"},
		{image: "dockerfile://./web?build-arg=1X=y", err: "NAME=value"},
		{image: "dockerfile://./web?build-arg=novalue", err: "NAME=value"},
		{image: "dockerfile://./web?build-arg=A=1&build-arg=A=2", err: "twice"},
		{image: "dockerfile://./web?platform=linux/arm64", err: "unknown setting"},
		{image: "dockerfile://./web?%zz", err: "after '?'"},
		{image: "dockerfile://./" + strings.Repeat("a", maxLen), err: "longer than"},
		{image: "dockerfile://./w\xffeb", err: "UTF-8"},
	} {
		t.Run(tc.image, func(t *testing.T) {
			got, err := Parse(tc.image)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("Parse = %+v, %v; want an ErrInvalid saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStringIsCanonical(t *testing.T) {
	for image, want := range map[string]string{
		"dockerfile://./web":                 "dockerfile://./web",
		"dockerfile://.":                     "dockerfile://./",
		"dockerfile://./web?file=Dockerfile": "dockerfile://./web",
		"dockerfile://./web?build-arg=B=2&target=t&build-arg=A=1": "dockerfile://./web?build-arg=A%3D1&build-arg=B%3D2&target=t",
		"dockerfile://./web?build-arg=A=1&build-arg=B=2&target=t": "dockerfile://./web?build-arg=A%3D1&build-arg=B%3D2&target=t",
	} {
		r, err := Parse(image)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", image, got, want)
		}
		again, err := Parse(r.String())
		if err != nil || !cmp.Equal(again, r) {
			t.Errorf("the canonical spelling %q parses to %+v, %v; want %+v", r.String(), again, err, r)
		}
	}
}

func TestNameAndPath(t *testing.T) {
	r, _ := Parse("dockerfile://./apps/Web?file=docker/Dockerfile")
	if got := r.Name("shop"); got != "web" {
		t.Errorf("Name = %q", got)
	}
	if got := r.DockerfilePath(); got != "apps/Web/docker/Dockerfile" {
		t.Errorf("DockerfilePath = %q", got)
	}
	root, _ := Parse("dockerfile://./")
	if got := root.Name("Shop"); got != "shop" {
		t.Errorf("root Name = %q", got)
	}
	if got := root.DockerfilePath(); got != "Dockerfile" {
		t.Errorf("root DockerfilePath = %q", got)
	}
}

// FuzzParse: whatever a tenant writes, a reference Parse accepts stays
// inside the repository, spells its settings as plain names, and its
// canonical spelling parses back to the same build.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"dockerfile://./web", "dockerfile://./a/b?target=x&file=D&build-arg=A=1", "dockerfile://./../x", "dockerfile://./web?file=..%2Fx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, image string) {
		r, err := Parse(image)
		if err != nil {
			return
		}
		for _, p := range []string{r.Dir, r.DockerfilePath()} {
			if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "-") || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
				t.Fatalf("%q escapes: %q", image, p)
			}
		}
		if strings.HasPrefix(r.Target, "-") {
			t.Fatalf("%q: target %q reads as a flag", image, r.Target)
		}
		again, err := Parse(r.String())
		if err != nil || !cmp.Equal(again, r) {
			t.Fatalf("%q → %q → %+v, %v; want %+v", image, r.String(), again, err, r)
		}
	})
}
