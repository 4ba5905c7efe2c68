// Package controlplane runs the private Kubernetes control plane of
// `knit dev`: a real etcd and kube-apiserver, built into ./bin by
// `make tools`, as child processes on loopback ports.
//
// Everything that must outlive one run lives in the state directory: etcd's
// data, the CA that signs every serving certificate, the service-account
// signing key and the admin token. Reusing them means objects, issued
// tokens and a kubeconfig the user already exported survive a restart.
// The children never outlive knit: they die with it even when it is killed.
package controlplane
