// Package config reads Knative's ConfigMaps — config-domain, config-network,
// config-gc, config-deployment, config-defaults, config-features — into
// typed values with Knative's keys and defaults, so an operator's existing
// settings carry over. Parsing is pure; the Store keeps the latest good copy of each.
package config
