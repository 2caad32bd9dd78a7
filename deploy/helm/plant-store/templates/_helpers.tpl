{{/* The chart's name, 63 characters at most (a DNS label). */}}
{{- define "plant-store.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The base name of every object: the release name, with the chart's appended unless it
already holds it. 63 characters at most, less the longest suffix used (-worker, -metrics).
*/}}
{{- define "plant-store.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 55 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "plant-store.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that select the release's pods; with "component" those of one role. */}}
{{- define "plant-store.selectorLabels" -}}
app.kubernetes.io/name: {{ include "plant-store.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end -}}

{{/* Every object's labels: (dict "root" $ "component" "api"); component may be empty. */}}
{{- define "plant-store.labels" -}}
helm.sh/chart: {{ include "plant-store.chart" .root }}
{{ include "plant-store.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: plant-store
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- end -}}

{{/* The role whose pods take the Service's traffic: api when split, else all. */}}
{{- define "plant-store.servingRole" -}}
{{- if .Values.roles.split -}}api{{- else -}}all{{- end -}}
{{- end -}}

{{/* A role's Deployment name: <fullname>-api, <fullname>-worker, or <fullname> for "all". */}}
{{- define "plant-store.deploymentName" -}}
{{- if eq .role "all" -}}
{{- include "plant-store.fullname" .root -}}
{{- else -}}
{{- printf "%s-%s" (include "plant-store.fullname" .root) .role -}}
{{- end -}}
{{- end -}}

{{- define "plant-store.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The Secret the pods read: the existing one, or the one the chart makes. */}}
{{- define "plant-store.secretName" -}}
{{- if .Values.secret.existingSecret -}}
{{- .Values.secret.existingSecret -}}
{{- else -}}
{{- include "plant-store.fullname" . -}}
{{- end -}}
{{- end -}}

{{/* The chart-made Secret's data, as a map of environment variable to value. */}}
{{- define "plant-store.secretData" -}}
{{- $s := .Values.secret -}}
{{- $data := dict "DATABASE_URL" $s.databaseUrl "CURSOR_SECRET" $s.cursorSecret -}}
{{- range $key, $value := dict "REDIS_URL" $s.redisUrl "BOOTSTRAP_TOKEN" $s.bootstrapToken "BOOTSTRAP_OWNER" $s.bootstrapOwner "AUTH_JWT_ISSUER" $s.authJwtIssuer "AUTH_JWT_AUDIENCE" $s.authJwtAudience "AUTH_JWT_JWKS_URI" $s.authJwtJwksUri }}
{{- if $value }}{{ $_ := set $data $key $value }}{{ end }}
{{- end }}
{{- range $key, $value := $s.extra }}{{ $_ := set $data $key (toString $value) }}{{ end }}
{{- toYaml $data -}}
{{- end -}}

{{/*
Checks that the schema cannot express; rendering fails with the reason. Included by every
template, so that `helm template -s` of any one of them checks too.
*/}}
{{- define "plant-store.validate" -}}
{{- $v := .Values -}}
{{- $drainAndTimeoutMs := add (int $v.shutdown.drainMs) (int $v.shutdown.timeoutMs) -}}
{{- if le (mul (int $v.terminationGracePeriodSeconds) 1000) $drainAndTimeoutMs -}}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be longer than shutdown.drainMs + shutdown.timeoutMs (%d ms): Kubernetes would kill pods before they finish their requests" (int $v.terminationGracePeriodSeconds) $drainAndTimeoutMs) -}}
{{- end -}}
{{- if and (not $v.secret.existingSecret) (not $v.secret.create) -}}
{{- fail "set secret.existingSecret (a Secret with DATABASE_URL) or secret.create=true with secret.databaseUrl" -}}
{{- end -}}
{{- if and (not $v.secret.existingSecret) (not $v.secret.databaseUrl) -}}
{{- fail "secret.databaseUrl is required (postgres://user:password@host:5432/db, e.g. through PgBouncer), or set secret.existingSecret" -}}
{{- end -}}
{{- if and (not $v.secret.existingSecret) (not $v.secret.cursorSecret) -}}
{{- fail "secret.cursorSecret is required: the key of paging cursors, the same for every pod (openssl rand -base64 48), or set secret.existingSecret with CURSOR_SECRET" -}}
{{- end -}}
{{- if and $v.api.autoscaling.enabled (lt (int $v.api.autoscaling.maxReplicas) (int $v.api.autoscaling.minReplicas)) -}}
{{- fail (printf "api.autoscaling.maxReplicas (%d) is below minReplicas (%d)" (int $v.api.autoscaling.maxReplicas) (int $v.api.autoscaling.minReplicas)) -}}
{{- end -}}
{{- $reserved := list "APP_ROLE" "DB_MIGRATE_ON_START" "SHUTDOWN_DRAIN_MS" "SHUTDOWN_TIMEOUT_MS" "DATABASE_URL" -}}
{{- range $env := concat $v.extraEnv $v.api.extraEnv $v.worker.extraEnv -}}
{{- if has $env.name $reserved -}}
{{- fail (printf "extraEnv must not set %s: the chart sets it (see values.yaml)" $env.name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Pod-level settings shared by the Deployments and the migrations Job. */}}
{{- define "plant-store.podSpecCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Environment every container gets: the Secret, whole, and DATABASE_URL by name. */}}
{{- define "plant-store.secretEnv" -}}
# Named, not optional: a Secret without DATABASE_URL stops the pod with a clear event
# instead of the image's SQLite default.
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "plant-store.secretName" . }}
      key: DATABASE_URL
{{- end -}}

{{/* The Deployment of one role: (dict "root" $ "role" "api"|"worker"|"all"). */}}
{{- define "plant-store.deployment" -}}
{{- $root := .root -}}
{{- $role := .role -}}
{{- $settings := ternary $root.Values.worker $root.Values.api (eq $role "worker") -}}
{{- $selector := dict "root" $root "component" $role -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "plant-store.deploymentName" . }}
  labels:
    {{- include "plant-store.labels" $selector | nindent 4 }}
spec:
  {{- if not (and (ne $role "worker") $root.Values.api.autoscaling.enabled) }}
  replicas: {{ $settings.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: {{ $root.Values.rollingUpdate.maxUnavailable }}
      maxSurge: {{ $root.Values.rollingUpdate.maxSurge }}
  selector:
    matchLabels:
      {{- include "plant-store.selectorLabels" $selector | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "plant-store.labels" $selector | nindent 8 }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        {{- if not $root.Values.secret.existingSecret }}
        # Pods roll when the chart-made Secret changes.
        checksum/secret: {{ include "plant-store.secretData" $root | sha256sum }}
        {{- end }}
        {{- with $root.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      {{- include "plant-store.podSpecCommon" $root | trim | nindent 6 }}
      # Longer than SHUTDOWN_DRAIN_MS + SHUTDOWN_TIMEOUT_MS (checked at render).
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      {{- if or $root.Values.topologySpread.hostname $root.Values.topologySpread.zone }}
      topologySpreadConstraints:
        {{- range $key, $on := dict "kubernetes.io/hostname" $root.Values.topologySpread.hostname "topology.kubernetes.io/zone" $root.Values.topologySpread.zone }}
        {{- if $on }}
        - maxSkew: {{ $root.Values.topologySpread.maxSkew }}
          topologyKey: {{ $key }}
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "plant-store.selectorLabels" $selector | nindent 14 }}
          matchLabelKeys: [pod-template-hash]
        {{- end }}
        {{- end }}
      {{- end }}
      containers:
        - name: plant-store
          image: {{ include "plant-store.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: 3000
              protocol: TCP
          env:
            - name: APP_ROLE
              value: {{ $role }}
            # Migrations run in the hook Job before the pods of a release start.
            - name: DB_MIGRATE_ON_START
              value: "false"
            - name: SHUTDOWN_DRAIN_MS
              value: {{ $root.Values.shutdown.drainMs | quote }}
            - name: SHUTDOWN_TIMEOUT_MS
              value: {{ $root.Values.shutdown.timeoutMs | quote }}
            {{- include "plant-store.secretEnv" $root | nindent 12 }}
            {{- with concat $root.Values.extraEnv $settings.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          envFrom:
            - secretRef:
                name: {{ include "plant-store.secretName" $root }}
          startupProbe:
            httpGet:
              path: /health/live
              port: http
            {{- toYaml $root.Values.probes.startup | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /health/ready
              port: http
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          livenessProbe:
            httpGet:
              path: /health/live
              port: http
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          resources:
            {{- toYaml $settings.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $root.Values.tmpVolume.sizeLimit }}
{{- end -}}
