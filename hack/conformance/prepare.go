package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
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
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	servingclient "knative.dev/serving/pkg/client/clientset/versioned"
)

// testResources are the files of Knative's test/config that its own CI
// applies before the suite: the test namespaces, and the ConfigMap and
// Secret the environment tests read.
var testResources = []string{"test/config/cluster-resources.yaml", "test/config/test-resources.yaml"}

// prepare makes what the suite expects of a Knative install: Knative's
// test resources, and in knit dev a gateway Service whose port 80 names
// the ingress's loopback port as its nodePort, which is how the suite
// finds the port to dial at --ingressendpoint.
// It returns the clients the harness goes on with.
func prepare(ctx context.Context, t *target) (clients, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", t.kubeconfig)
	if err != nil {
		return clients{}, err
	}
	// Knative's Service type sends spec.template.metadata.creationTimestamp
	// as null, which the API server warns of on every dry run a flag probe
	// makes (features.go): the harness's own requests need no warnings.
	cfg.WarningHandler = rest.NoWarnings{}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return clients{}, err
	}
	serving, err := servingclient.NewForConfig(cfg)
	if err != nil {
		return clients{}, err
	}
	objs, err := knativeFiles(ctx, testResources...)
	if err != nil {
		return clients{}, err
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
			return clients{}, err
		}
	}
	if err := setNetwork(ctx, kube, testNetwork); err != nil {
		return clients{}, err
	}
	return clients{kube: kube, serving: serving}, nil
}

// testNetwork is what Knative's CI sets in config-network for every
// suite (test/config/ytt/core overlays): DomainMappings claim their
// domains themselves, which the v1beta1 suite's tests expect.
var testNetwork = map[string]string{"autocreate-cluster-domain-claims": "true"}

// setNetwork sets keys in knit-system's config-network, keeping its
// other keys (creating it when missing), as Knative's CI overlays do.
func setNetwork(ctx context.Context, kube kubernetes.Interface, keys map[string]string) error {
	cms := kube.CoreV1().ConfigMaps(systemNamespace)
	err := retry.OnError(retry.DefaultRetry, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		cm, err := cms.Get(ctx, networkConfigMap, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = cms.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: networkConfigMap, Namespace: systemNamespace}, Data: keys}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		maps.Copy(cm.Data, keys)
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set %s/%s: %w", systemNamespace, networkConfigMap, err)
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

// knativeFiles decodes files of the pinned release (paths in its module).
func knativeFiles(ctx context.Context, files ...string) ([]runtime.Object, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "knative.dev/serving").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m knative.dev/serving: %w", err)
	}
	dir := strings.TrimSpace(string(out))
	var objs []runtime.Object
	for _, name := range files {
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
