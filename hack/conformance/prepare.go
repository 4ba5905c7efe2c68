package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
)

// testResources are the files of Knative's test/config that its own CI
// applies before the suite: the test namespaces, and the ConfigMap and
// Secret the environment tests read.
var testResources = []string{"test/config/cluster-resources.yaml", "test/config/test-resources.yaml"}

// prepare makes what the suite expects of a Knative install: Knative's
// test resources, and in knit dev a gateway Service whose port 80 names
// the ingress's loopback port as its nodePort, which is how the suite
// finds the port to dial at --ingressendpoint.
func prepare(ctx context.Context, t *target) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", t.kubeconfig)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	objs, err := knativeTestResources(ctx)
	if err != nil {
		return err
	}
	if t.gatewayPort != 0 {
		objs = append(objs,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: t.gatewayNS}},
			&corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: t.gatewayName, Namespace: t.gatewayNS},
				Spec: corev1.ServiceSpec{
					Type:  corev1.ServiceTypeNodePort,
					Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: t.gatewayPort}},
				},
			})
	}
	for _, obj := range objs {
		if err := create(ctx, kube, obj); err != nil {
			return err
		}
	}
	return nil
}

// create makes obj unless it exists.
func create(ctx context.Context, kube kubernetes.Interface, obj runtime.Object) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = kube.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		_, err = kube.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Secret:
		_, err = kube.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Service:
		_, err = kube.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		return fmt.Errorf("prepare: no way to create a %T", obj)
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		m, _ := meta.Accessor(obj)
		return fmt.Errorf("create %T %s/%s: %w", obj, m.GetNamespace(), m.GetName(), err)
	}
	return nil
}

// knativeTestResources decodes testResources from the pinned release.
func knativeTestResources(ctx context.Context) ([]runtime.Object, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "knative.dev/serving").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m knative.dev/serving: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	var objs []runtime.Object
	for _, name := range testResources {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(bytes.TrimSpace(doc)) == 0 || isComment(doc) {
				continue
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// isComment says whether a YAML document holds nothing but comments.
func isComment(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") && l != "---" {
			return false
		}
	}
	return true
}
