/*
Copyright 2018 The Knative Authors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// This file replaces knative.dev/serving@v0.42.2's
// pkg/queue/sharedmain/servers.go in the queue-proxy `make bench` builds
// (build.sh). It is that file with the listen addresses changed and
// nothing else: in a pod the queue-proxy binds every interface and the
// fixed admin (8022) and metrics (9090) ports of its own network
// namespace; on a shared machine the bench must stay on loopback and must
// not take ports other processes may hold. So every server binds
// 127.0.0.1, the serving port stays QUEUE_SERVING_PORT, and the admin and
// autoscaler-metrics servers take free ports (the bench reads neither).
// The request-metrics exporter (knative.dev/pkg/metrics, port 9091) takes
// its host from METRICS_PROMETHEUS_HOST, which the bench sets to
// 127.0.0.1. Handlers, timeouts and the h2c server are Knative's own.

package sharedmain

import (
	"net/http"
	"time"

	pkgnet "knative.dev/pkg/network"
	"knative.dev/serving/pkg/queue"
)

// loopback is where the bench's queue-proxy listens.
const loopback = "127.0.0.1"

func mainServer(addr string, handler http.Handler) *http.Server {
	return pkgnet.NewServer(loopback+addr, handler) // addr is ":" + QUEUE_SERVING_PORT
}

func adminServer(addr string, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:    loopback + ":0", // was addr, ":8022"
		Handler: handler,
		// https://medium.com/a-journey-with-go/go-understand-and-mitigate-slowloris-attack-711c1b1403f6
		ReadHeaderTimeout: time.Minute,
	}
}

func metricsServer(reporter *queue.ProtobufStatsReporter) *http.Server {
	metricsMux := http.NewServeMux()
	metricsMux.Handle("/metrics", queue.NewStatsHandler(reporter))
	return &http.Server{
		Addr:              loopback + ":0", // was ":" + networking.AutoscalingQueueMetricsPort (9090)
		Handler:           metricsMux,
		ReadHeaderTimeout: time.Minute, //https://medium.com/a-journey-with-go/go-understand-and-mitigate-slowloris-attack-711c1b1403f6
	}
}
