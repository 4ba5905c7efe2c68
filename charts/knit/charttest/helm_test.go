//go:build !unit

package charttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test, and repoRoot the clone it lives in.
const (
	chartDir = ".."
	repoRoot = "../../.."
)

// helmBinary is ./bin/helm. Without it the test fails (make test builds
// it); make test-unit leaves this package out (//go:build !unit).
func helmBinary(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin", "helm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(fmt.Sprintf("no %s: run `make helm` (make test and make chart-test do)", bin))
	}
	return bin
}

// helm runs ./bin/helm with args and returns its stdout; a non-zero exit
// is returned as an error carrying stderr.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	readChart(t)
	cmd := exec.Command(helmBinary(t), args...)
	// Keep the developer's Helm config, caches and kubeconfig out of it.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.New(strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// readChart reads every file of the chart once. Only helm reads them for
// the tests, and go test caches a result by the files the test process
// itself opened: without this, an edited template would replay a stale
// pass.
func readChart(t *testing.T) {
	t.Helper()
	chartRead.Do(func() {
		chartReadErr = filepath.WalkDir(chartDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			_, err = os.ReadFile(path)
			return err
		})
	})
	if chartReadErr != nil {
		t.Fatal(chartReadErr)
	}
}

var (
	chartRead    sync.Once
	chartReadErr error
)

// template renders the chart as `helm install knit charts/knit -n
// knit-system` would, with extra flags (--set …).
func template(t *testing.T, flags ...string) string {
	t.Helper()
	out, err := helm(t, append([]string{"template", "knit", chartDir, "--namespace", "knit-system"}, flags...)...)
	if err != nil {
		t.Fatalf("helm template %s: %v", strings.Join(flags, " "), err)
	}
	return out
}

// manifest is a rendered chart, one object per document.
type manifest []*unstructured.Unstructured

// render is template, decoded.
func render(t *testing.T, flags ...string) manifest {
	t.Helper()
	objs, err := decode(template(t, flags...))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// decode splits a multi-document YAML stream into objects, dropping empty
// documents (templates that render nothing).
func decode(stream string) (manifest, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	var out manifest
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		obj := map[string]any{}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// find returns the object of that kind and name, or nil.
func (m manifest) find(kind, name string) *unstructured.Unstructured {
	for _, o := range m {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// into decodes the object of that kind and name into out, strictly: a
// field the Go type does not know is a chart bug, not something to drop.
func (m manifest) into(t *testing.T, kind, name string, out any) {
	t.Helper()
	o := m.find(kind, name)
	if o == nil {
		t.Fatalf("the chart renders no %s %s", kind, name)
	}
	b, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
}

// yamlOf writes objects back as one YAML stream, for kubectl.
func yamlOf(t *testing.T, objs manifest) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		doc, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.Bytes()
}
