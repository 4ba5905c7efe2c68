// Package configuration reconciles Configurations: every template change
// stamps a new immutable Revision, and status tracks the latest created
// and the latest ready one.
package configuration
