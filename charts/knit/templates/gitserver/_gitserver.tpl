{{/*
knit.gitserverURL is the base URL the controller fetches pushed repositories
from and the gitserver tracks them at: https:// with gitserver.tls.secretName.
*/}}
{{- define "knit.gitserverURL" -}}
{{- if .Values.gitserver.tls.secretName -}}
{{ include "knit.serviceURL" (dict "root" . "component" "gitserver" "port" 8090) | replace "http://" "https://" }}
{{- else -}}
{{ include "knit.serviceURL" (dict "root" . "component" "gitserver" "port" 8090) }}
{{- end -}}
{{- end }}

{{/* knit.gitserverOwners is gitserver.repositoryNamespaces as repo=namespace,… */}}
{{- define "knit.gitserverOwners" -}}
{{- $out := list -}}
{{- range $repo, $ns := .Values.gitserver.repositoryNamespaces -}}
{{- $out = append $out (printf "%s=%s" $repo $ns) -}}
{{- end -}}
{{ join "," $out }}
{{- end }}
