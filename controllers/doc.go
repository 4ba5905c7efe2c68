// Package controllers holds one package per reconciled kind. Each follows
// Knative's split: controller.go wires the reconciler to the manager,
// <kind>.go reads, computes and writes in small phases, and resources/
// holds the pure functions that build child objects.
package controllers
