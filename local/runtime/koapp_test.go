package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/knitops/knit/local/probes"
)

func TestKoAppPath(t *testing.T) {
	for _, tc := range []struct{ image, want string }{
		{"ko://knative.dev/serving/test/test_images/readiness", "/ko-app/readiness"},
		{"ko://example.com/app/cmd/server/", "/ko-app/server"},
		{"ko://./cmd/hi", "/ko-app/hi"},
		{"ko://example.com/tool/v2", "/ko-app/v2"}, // ko names it by the path's base, major version and all
		{"ko://.", ""}, // the main module's own name, unknown here
		{"ko://./", ""},
		{"ko://", ""},
		{"knit://queue", ""},
		{"docker.io/library/busybox", ""},
	} {
		if got := koAppPath(tc.image); got != tc.want {
			t.Errorf("koAppPath(%q) = %q, want %q", tc.image, got, tc.want)
		}
	}
}

func TestKoAppArgv0(t *testing.T) {
	build := func(_ context.Context, image string) (string, error) {
		if image == "ko://example.com/broken" {
			return "", errors.New("undefined: x")
		}
		return "/state/builds/key/" + image[len("ko://example.com/"):], nil
	}
	for _, tc := range []struct {
		name, argv0, image string
		want, wantErr      string
	}{
		{name: "the image's own binary", argv0: "/ko-app/readiness", image: "ko://example.com/readiness", want: "/state/builds/key/readiness"},
		{name: "another image's binary stays", argv0: "/ko-app/other", image: "ko://example.com/readiness", want: "/ko-app/other"},
		{name: "an ordinary command stays", argv0: "sh", image: "ko://example.com/readiness", want: "sh"},
		{name: "not a ko image", argv0: "/ko-app/readiness", image: "example.com/readiness:1", want: "/ko-app/readiness"},
		{name: "a failed build says whose binary", argv0: "/ko-app/broken", image: "ko://example.com/broken",
			wantErr: "/ko-app/broken is the binary of ko://example.com/broken, which did not build: undefined: x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := koAppArgv0(context.Background(), tc.argv0, &corev1.Container{Image: tc.image}, build)
			var gotErr string
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([]string{tc.want, tc.wantErr}, []string{got, gotErr}); diff != "" {
				t.Errorf("koAppArgv0 (-want +got):\n%s", diff)
			}
		})
	}
}

// An exec probe written for the image ko builds (`/ko-app/readiness
// probe`) runs the binary built for it, with its own argv[0].
func TestExecProbeRunsKoApp(t *testing.T) {
	c := &corev1.Container{Name: "user-container", Image: "ko://example.com/sh"}
	e := newContainerExec(nil, []string{"PATH=/usr/bin:/bin"}, t.TempDir())
	e.argv0 = func(ctx context.Context, name string) (string, error) {
		return koAppArgv0(ctx, name, c, func(context.Context, string) (string, error) { return "/bin/sh", nil })
	}
	p := probes.New(&corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
		Command: []string{"/ko-app/sh", "-c", `test "$0" = /ko-app/sh || { echo "argv0 $0"; exit 1; }`},
	}}}, probes.Target{Container: c, Exec: e.run})
	if err := p.Check(context.Background(), 5*time.Second); err != nil {
		t.Errorf("check = %v, want the probe to run /bin/sh as /ko-app/sh", err)
	}
}
