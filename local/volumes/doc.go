// Package volumes writes a pod's volumes of API data as the kubelet
// writes them: configMap, secret, projected (ConfigMaps, Secrets, the
// downward API, service-account tokens) and downwardAPI.
//
// PayloadOf is what such a volume holds — every key or the items asked,
// at their paths, with defaultMode or each item's mode, a missing
// optional source or key left out — read from Sources (the API server,
// through a TokenCache that rotates tokens when the kubelet would) and,
// for the downward API, from a Pod. WriteAtomic lays a Payload out as the
// kubelet's AtomicWriter does (a timestamped directory, ..data pointing
// to it, each name a link through ..data) and swaps a new one in with one
// rename. SetOwnership gives a volume to the pod's fsGroup; SubPath keeps
// a mount's subPath inside its volume, as writing keeps each file's.
//
// Which volumes a replica has, where they lie, when they are written,
// resynced and removed, and how they are mounted are package runtime's
// (podvolumes.go, volumesync.go); so is the persistentVolumeClaim.
package volumes
