{{/*
Helpers shared by every template. Most take a dict with "root" (the
top-level context, $) and "component" (controller, autoscaler, activator,
ingress or gitserver): every object of a component is named knit-<component>
and carries app.kubernetes.io/component: <component>.
*/}}

{{/*
knit.namespace is the one namespace knit runs in: config.SystemNamespace in
the Go code, a constant. The components look there for their ConfigMaps,
leases and the webhook Secret, and other objects point at its Services by
DNS name, so the chart refuses any other (knit.checks).
*/}}
{{- define "knit.namespace" -}}
knit-system
{{- end }}

{{/* knit.name is an object's name: knit-<component>. */}}
{{- define "knit.name" -}}
knit-{{ .component }}
{{- end }}

{{/*
knit.selectorLabels pick one component's pods; never change them
(selectors are immutable). app.kubernetes.io/name is the component's
application, knit-<component>, as `kubectl get pods -l
app.kubernetes.io/name=knit-controller` expects; part-of says knit.
*/}}
{{- define "knit.selectorLabels" -}}
app.kubernetes.io/name: {{ include "knit.name" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
knit.podLabels are the five app.kubernetes.io labels, without the chart and
app versions: a chart bump alone does not roll every pod.
*/}}
{{- define "knit.podLabels" -}}
{{ include "knit.selectorLabels" . }}
app.kubernetes.io/part-of: knit
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end }}

{{/* knit.labels go on every object's metadata. */}}
{{- define "knit.labels" -}}
{{ include "knit.podLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
knit.metadata is the metadata block of a namespaced object of a component;
pass "name" to override knit-<component>.
*/}}
{{- define "knit.metadata" -}}
metadata:
  name: {{ .name | default (include "knit.name" .) }}
  namespace: {{ include "knit.namespace" .root }}
  labels:
    {{- include "knit.labels" . | nindent 4 }}
{{- end }}

{{/* knit.image is <repository>/<name>:<tag>; pass "name" (knit, knit-queue, knit-gitserver). */}}
{{- define "knit.image" -}}
{{ trimSuffix "/" .root.Values.image.repository }}/{{ .name }}:{{ .root.Values.image.tag }}
{{- end }}

{{/* knit.serviceURL is http://<Service>.knit-system.svc:<port>, how components reach one another. */}}
{{- define "knit.serviceURL" -}}
http://{{ include "knit.name" . }}.{{ include "knit.namespace" .root }}.svc:{{ .port }}
{{- end }}

{{/*
knit.seconds turns a Go duration of whole hours, minutes and seconds
("15s", "1m30s", "2h") into seconds, and fails on anything else: the
chart does arithmetic with it (terminationGracePeriodSeconds).
*/}}
{{- define "knit.seconds" -}}
{{- $d := toString . -}}
{{- if or (eq $d "") (not (regexMatch "^([0-9]+h)?([0-9]+m)?([0-9]+s)?$" $d)) -}}
{{- fail (printf "drainQuietPeriod %q: want a duration of whole hours, minutes and seconds, like 15s or 1m30s" $d) -}}
{{- end -}}
{{- $unit := dict "h" 3600 "m" 60 "s" 1 -}}
{{- $total := 0 -}}
{{- range regexFindAll "[0-9]+[hms]" $d -1 -}}
{{- $total = add $total (mul (regexFind "^[0-9]+" . | int) (get $unit (regexFind "[hms]$" .))) -}}
{{- end -}}
{{- $total -}}
{{- end }}

{{/*
knit.drainGracePeriod is the terminationGracePeriodSeconds of the request
path (activator, ingress): after SIGTERM a pod keeps serving for
drainQuietPeriod while endpoints forget it, then lets the requests in
flight finish, and one may last as long as the longest timeout a Revision
may set (config-defaults max-revision-timeout-seconds, Knative's 600 when
unset). Killing it sooner cuts those requests off.
*/}}
{{- define "knit.drainGracePeriod" -}}
{{- $quiet := include "knit.seconds" .Values.drainQuietPeriod | int -}}
{{- $longest := index .Values.config.defaults "max-revision-timeout-seconds" | default 600 | int -}}
{{- add $quiet $longest -}}
{{- end }}

{{/*
knit.podSpec is the pod-level part every component shares: its own
ServiceAccount, non-root (the images run as 65532:65532 and have no shell),
RuntimeDefault seccomp, the scheduling values, and a soft anti-affinity
that spreads replicas over nodes so a PodDisruptionBudget can be met.
Pass "fsGroup" true for a component that writes a volume.
*/}}
{{- define "knit.podSpec" -}}
serviceAccountName: {{ include "knit.name" . }}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  {{- if .fsGroup }}
  fsGroup: 65532
  fsGroupChangePolicy: OnRootMismatch
  {{- end }}
  seccompProfile:
    type: RuntimeDefault
{{- with .root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .root.Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
  {{- if .root.Values.affinity }}
  {{- toYaml .root.Values.affinity | nindent 2 }}
  {{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "knit.selectorLabels" . | nindent 14 }}
  {{- end }}
{{- end }}

{{/*
knit.container is the part of a component's container that is the same
everywhere: image pull policy, the downward-API environment, probes on the
probes port, a locked-down security context, resources from
.Values.<component>.resources. The caller writes name, image, args, ports
(ending with knit.ports) and volumeMounts (ending with knit.tmpMount).
*/}}
{{- define "knit.container" -}}
imagePullPolicy: {{ .root.Values.image.pullPolicy }}
env:
  - name: POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
  - name: POD_NAMESPACE
    valueFrom:
      fieldRef:
        fieldPath: metadata.namespace
  - name: POD_IP
    valueFrom:
      fieldRef:
        fieldPath: status.podIP
  {{- with dig "resources" "limits" "memory" "" (index .root.Values .component) }}
  - name: GOMEMLIMIT
    value: {{ include "knit.goMemLimit" . | quote }}
  {{- end }}
  {{- if and (eq .component "controller") .root.Values.gitserver.tls.secretName }}
  # The Git server's CA (controller/deployment.yaml mounts it) joins the
  # system roots Go trusts: crypto/x509 reads every file of SSL_CERT_DIR.
  - name: SSL_CERT_DIR
    value: /etc/knit/gitserver-ca:/etc/ssl/certs
  {{- end }}
livenessProbe:
  httpGet:
    path: /healthz
    port: probes
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: probes
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 3
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: ["ALL"]
resources:
  {{- toYaml (index .root.Values .component).resources | nindent 2 }}
{{- end }}

{{/*
knit.goMemLimit is GOMEMLIMIT for a container whose memory limit is the
quantity given (512Mi, 1Gi, 1G, 1.5Gi or plain bytes): 90% of it, in bytes.
Knowing it, the Go runtime collects garbage harder as the heap nears it
instead of letting garbage reach the cgroup limit, where the kernel kills
the container; the tenth left over is for memory the Go runtime does not
count. It cannot make room for live memory over the limit: a process that
really holds that much is still OOM-killed. The downward API
(resourceFieldRef limits.memory) gives only the whole limit, no headroom.
*/}}
{{- define "knit.goMemLimit" -}}
{{- $q := toString . -}}
{{- $units := dict "" "1" "k" "1e3" "M" "1e6" "G" "1e9" "T" "1e12" "Ki" "1024" "Mi" "1048576" "Gi" "1073741824" "Ti" "1099511627776" -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $unit := trimPrefix $num $q -}}
{{- if or (not $num) (not (hasKey $units $unit)) -}}
{{- fail (printf "memory limit %q: write it as bytes or with a suffix k, M, G, T, Ki, Mi, Gi or Ti" $q) -}}
{{- end -}}
{{- mulf (float64 $num) (float64 (get $units $unit)) 0.9 | int64 -}}
{{- end -}}

{{/* knit.ports are the container ports every component has, after its own. */}}
{{- define "knit.ports" -}}
- name: probes
  containerPort: 8081
  protocol: TCP
- name: metrics
  containerPort: 9090
  protocol: TCP
{{- end }}

{{/* knit.logLevel is the -v flag every component takes last. */}}
{{- define "knit.logLevel" -}}
- -v={{ .Values.logLevel }}
{{- end }}

{{/*
knit.tmp: the root filesystem is read-only, so /tmp is an emptyDir.
knit.tmpMount goes under volumeMounts, knit.tmpVolume under volumes.
*/}}
{{- define "knit.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end }}
{{- define "knit.tmpVolume" -}}
- name: tmp
  emptyDir: {}
{{- end }}

{{/*
knit.pdb keeps one replica of a request-path component up through node
drains. With a single replica it would block every drain, so it is left
out then.
*/}}
{{- define "knit.pdb" -}}
{{- if gt (int (index .root.Values .component).replicas) 1 }}
apiVersion: policy/v1
kind: PodDisruptionBudget
{{ include "knit.metadata" . }}
spec:
  minAvailable: 1
  selector:
    matchLabels:
      {{- include "knit.selectorLabels" . | nindent 6 }}
{{- end }}
{{- end }}

{{/*
knit.clusterRoleBinding and knit.roleBinding bind knit-<component>'s
ServiceAccount to its ClusterRole and to its Role in knit-system, both
named knit-<component>.
*/}}
{{- define "knit.clusterRoleBinding" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ include "knit.name" . }}
  labels:
    {{- include "knit.labels" . | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "knit.name" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "knit.name" . }}
    namespace: {{ include "knit.namespace" .root }}
{{- end }}
{{- define "knit.roleBinding" -}}
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
{{ include "knit.metadata" . }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "knit.name" . }}
subjects:
  - kind: ServiceAccount
    name: {{ include "knit.name" . }}
    namespace: {{ include "knit.namespace" .root }}
{{- end }}

{{/*
knit.leaderElectionRules are the Role rules a leader-elected component needs:
its own Lease in knit-system (controller-runtime's LeasesResourceLock gets,
creates and renews it). create cannot be limited by name: RBAC does not
know the name of an object before it exists.
*/}}
{{- define "knit.leaderElectionRules" -}}
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: [{{ include "knit.name" . | quote }}]
  verbs: ["get", "update"]
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["create"]
{{- end }}

{{/*
knit.eventRules: controller-runtime records events both through the core
API (leader election's recorder) and events.k8s.io (its newer recorder);
repeats are patched onto the first.
*/}}
{{- define "knit.eventRules" -}}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}

{{/*
knit.checks fails the render on values that cannot work, with the fix in
the message. templates/checks.yaml runs it.
*/}}
{{- define "knit.checks" -}}
{{- $ns := include "knit.namespace" . -}}
{{- if ne .Release.Namespace $ns -}}
{{- fail (printf "knit must be installed in the namespace %s, not %q: its components find their ConfigMaps, leader-election leases and webhook Secret there, and one another by DNS name. Install with: helm install %s charts/knit -n %s --create-namespace" $ns .Release.Namespace .Release.Name $ns) -}}
{{- end -}}
{{- range $what, $type := dict "ingress.service.type" .Values.ingress.service.type "gitserver.service.type" .Values.gitserver.service.type -}}
{{- if not (has $type (list "ClusterIP" "NodePort" "LoadBalancer")) -}}
{{- fail (printf "%s %q: want ClusterIP, NodePort or LoadBalancer" $what $type) -}}
{{- end -}}
{{- end -}}
{{- range $component := list "controller" "autoscaler" "activator" "ingress" -}}
{{- if lt (int (index $.Values $component).replicas) 1 -}}
{{- fail (printf "%s.replicas must be at least 1" $component) -}}
{{- end -}}
{{- end -}}
{{- $_ := include "knit.seconds" .Values.drainQuietPeriod -}}
{{- end }}

{{/*
knit.controllerGrant: a ClusterRole of the controller's that reads objects
one by one (rules), bound cluster-wide when namespaces holds "*", else by
a RoleBinding in each namespace listed; nothing when the list is empty.
Takes root, component, namespaces and rules (a YAML list).
*/}}
{{- define "knit.controllerGrant" -}}
{{- $c := dict "root" .root "component" .component }}
{{- if .namespaces }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ include "knit.name" $c }}
  labels:
    {{- include "knit.labels" $c | nindent 4 }}
rules:
  {{- .rules | nindent 2 }}
{{- $bindings := list "" }}
{{- if not (has "*" .namespaces) }}{{ $bindings = .namespaces }}{{ end }}
{{- range $bindings }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: {{ if . }}RoleBinding{{ else }}ClusterRoleBinding{{ end }}
metadata:
  name: {{ include "knit.name" $c }}
  {{- if . }}
  namespace: {{ . }}
  {{- end }}
  labels:
    {{- include "knit.labels" $c | nindent 4 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ include "knit.name" $c }}
subjects:
  - kind: ServiceAccount
    name: {{ include "knit.name" (dict "root" $c.root "component" "controller") }}
    namespace: {{ include "knit.namespace" $c.root }}
{{- end }}
{{- end }}
{{- end }}
