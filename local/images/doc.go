// Package images is knit dev's image store: it pulls OCI and Docker
// images from registries the way a kubelet's container runtime does and
// keeps them, content-addressed, in knit dev's state dir, so that every
// replica of every Revision starts from the same unpacked layers.
//
// The mechanisms are established ones, not knit's: go-containerregistry
// speaks the registry protocol (tokens, redirects, image indexes, digest
// verification) and resolves credentials with the kubelet's matching rules
// for dockerconfigjson Secrets; containerd's overlay snapshotter keeps
// the layers, one committed snapshot per chain ID, and containerd's
// archive package applies each layer (whiteouts, hard links, ownership,
// extended attributes, devices). knit's code is the glue: which manifest
// of an index this machine runs, the pull policy, the pull errors a
// Revision shows, which registries may be spoken to over plain HTTP, and
// the record of what a tag resolved to.
//
// # Layout
//
// Under the store's root:
//
//	snapshots/            containerd's overlay snapshotter (metadata.db, snapshots/<id>/fs)
//	images/sha256/<hex>   a pulled image's record (JSON), by its top digest
//	tags.json             reference → top digest, for IfNotPresent on a tag
//
// A container's root filesystem is an active snapshot over the image's
// top layer (Prepare), mounted by the caller and removed when the
// container is gone (Release); a store opened again removes the active
// snapshots a killed knit dev left.
package images
