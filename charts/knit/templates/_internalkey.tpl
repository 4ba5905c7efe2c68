{{/*
The internal key: the Secret whose keys the activator, the autoscaler and
the ingress authenticate each other with (internal/hopauth). It is mounted
as a file the components re-read, so a key added to or removed from the
Secret reaches them without a restart.
*/}}

{{/* knit.internalKeySecret is the Secret's name: internalKey.existingSecret, or the chart's. */}}
{{- define "knit.internalKeySecret" -}}
{{ .Values.internalKey.existingSecret | default "knit-internal-key" }}
{{- end }}

{{/* knit.internalKeyArg is the flag pointing a component at the mounted file. */}}
{{- define "knit.internalKeyArg" -}}
- --internal-key-file=/etc/knit/internal-key/keys
{{- end }}

{{/* knit.internalKeyMount goes under volumeMounts, knit.internalKeyVolume under volumes. */}}
{{- define "knit.internalKeyMount" -}}
- name: internal-key
  mountPath: /etc/knit/internal-key
  readOnly: true
{{- end }}
{{/* 0444: the components run as 65532 with no fsGroup, so a 0400 file
owned by root is unreadable to them; the volume is this pod's alone. */}}
{{- define "knit.internalKeyVolume" -}}
- name: internal-key
  secret:
    secretName: {{ include "knit.internalKeySecret" . }}
    defaultMode: 0444
    items:
      - key: keys
        path: keys
{{- end }}
