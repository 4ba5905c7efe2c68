// Package revision reconciles Revisions into what runs them: a Deployment
// (the app plus the queue-proxy sidecar) and a PodAutoscaler, and reports
// their health as the Revision's conditions.
package revision
