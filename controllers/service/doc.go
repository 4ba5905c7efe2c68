// Package service reconciles Knative Services: each owns a Configuration
// and a Route of its name and reports their state as its own.
package service
