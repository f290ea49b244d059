{{- define "reactorfed-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "reactorfed-operator.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: reactorfed
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "reactorfed-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "reactorfed-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "reactorfed-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The namespaces the operator manages (scope=namespace). */}}
{{- define "reactorfed-operator.namespaces" -}}
{{- if .Values.watchNamespaces -}}
{{- join "," .Values.watchNamespaces -}}
{{- else -}}
{{- .Release.Namespace -}}
{{- end -}}
{{- end -}}

{{/* RBAC rules on federations and the objects the operator creates. */}}
{{- define "reactorfed-operator.rules" -}}
- apiGroups: [reactorfed.io]
  resources: [reactorfederations]
  verbs: [get, list, watch, patch]
- apiGroups: [reactorfed.io]
  resources: [reactorfederations/status]
  verbs: [get, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, delete, patch]
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get]
- apiGroups: [""]
  resources: [services, persistentvolumeclaims]
  verbs: [get, create]
# the members' keys: a Secret per member and the RTI's, the member table (a ConfigMap), each
# by name (never listed: the operator reads no Secret but its own, and those only by name)
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create, patch, delete]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, create, patch]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, create, patch]
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{/* Read-only observation: what Kopf needs at startup (new CRDs, namespaces), and the nodes
     (all or nothing: does every pod of an incarnation fit before any is scheduled). */}}
{{- define "reactorfed-operator.discoveryRules" -}}
- apiGroups: [""]
  resources: [nodes]
  verbs: [list]
- apiGroups: [apiextensions.k8s.io]
  resources: [customresourcedefinitions]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [namespaces]
  verbs: [list, watch]
{{- end -}}
