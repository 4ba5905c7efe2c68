// Package claims is knit dev's stand-in for the cluster's volume
// controllers: a provisioner, the PV controller and the pvc- and
// pv-protection controllers, for one node whose volumes are directories.
//
// Binder binds every PersistentVolumeClaim in the API server: a pending
// claim gets a directory, Dir(<state>/claims, namespace, name, uid), and a
// hostPath PersistentVolume pvc-<uid> for it (Provisioner's), and the two
// are bound as the PV controller binds them; a claim naming a volume, or
// named by one, is bound to it instead. A deleted claim keeps its
// pvc-protection finalizer while a replica uses it, then its volume is
// Released and, once no replica uses the directory, the directory and the
// volume are deleted. Which claims and directories replicas use is the
// runtime's to say (Binder.Uses, a list of Use): the binder asks it on
// every pass, every Resync.
//
// VolumeDir is the directory of this machine a bound volume is, for the
// runtime, which makes a replica wait for its claims and mounts their
// directories (package runtime, claims.go).
package claims
