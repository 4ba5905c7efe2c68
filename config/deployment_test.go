package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestParseDeployment(t *testing.T) {
	defaults := func(edit func(*Deployment)) *Deployment {
		d := &Deployment{ProgressDeadline: 600 * time.Second, QueueSidecarImage: "ghcr.io/knitops/knit:latest",
			RegistriesSkippingTagResolving: []string{"kind.local", "ko.local", "dev.local", "knit.local"},
			DigestResolutionTimeout:        10 * time.Second}
		if edit != nil {
			edit(d)
		}
		return d
	}
	tests := []struct {
		name    string
		data    map[string]string
		want    *Deployment
		wantErr string
	}{{
		name: "Knative's defaults, and knit.local skipped",
		want: defaults(nil),
	}, {
		name: "a list of registries, blanks dropped",
		data: map[string]string{"registries-skipping-tag-resolving": " registry.local:5000, ,kind.local ", "digest-resolution-timeout": "30s"},
		want: defaults(func(d *Deployment) {
			d.RegistriesSkippingTagResolving = []string{"registry.local:5000", "kind.local"}
			d.DigestResolutionTimeout = 30 * time.Second
		}),
	}, {
		name: "the queue-proxy's resources",
		data: map[string]string{"queue-sidecar-cpu-request": "25m", "queue-sidecar-memory-limit": " 800Mi "},
		want: defaults(func(d *Deployment) {
			d.QueueSidecar.CPURequest, d.QueueSidecar.MemoryLimit = ptr.To(resource.MustParse("25m")), ptr.To(resource.MustParse("800Mi"))
		}),
	}, {
		name:    "a resource that is no quantity",
		data:    map[string]string{"queue-sidecar-cpu-limit": "one"},
		wantErr: `config-deployment: queue-sidecar-cpu-limit="one": want a quantity such as 100m or 400Mi`,
	}, {
		name: "an empty list resolves every registry",
		data: map[string]string{"registries-skipping-tag-resolving": ""},
		want: defaults(func(d *Deployment) { d.RegistriesSkippingTagResolving = nil }),
	}, {
		name:    "a timeout must be positive",
		data:    map[string]string{"digest-resolution-timeout": "0s"},
		wantErr: "digest-resolution-timeout must be a positive duration",
	}, {
		name:    "a bad timeout names the key",
		data:    map[string]string{"digest-resolution-timeout": "soon"},
		wantErr: `config-deployment: digest-resolution-timeout="soon"`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDeployment(tc.data)
			checkErr(t, err, tc.wantErr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseDeployment (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSkipsTagResolving(t *testing.T) {
	d, err := ParseDeployment(map[string]string{"registries-skipping-tag-resolving": "registry.local:5000"})
	if err != nil {
		t.Fatal(err)
	}
	for reg, want := range map[string]bool{"registry.local:5000": true, "registry.local": false, "kind.local": false} {
		if got := d.SkipsTagResolving(reg); got != want {
			t.Errorf("SkipsTagResolving(%q) = %v, want %v", reg, got, want)
		}
	}
}
