// Package hub is knit's Git endpoint: the smart-HTTP Git server users push
// to and the forge webhook receivers, behind one http.Handler, turning
// each push or verified delivery into a GitRepository sync. knit dev serves
// it on --git-addr; on a cluster `knit gitserver` serves it from a
// StatefulSet and wakes the controller through the API.
package hub
