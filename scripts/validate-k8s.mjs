// Validates the objects of a `helm template` render of deploy/helm/plant-store, for
// scripts/helm-check.sh:
//
//   node scripts/validate-k8s.mjs --modules <dir>/node_modules --variant <name> render.yaml
//
// Each object is checked against the Kubernetes schemas of the npm package kubernetes-models
// (and @kubernetes-models/prometheus-operator for ServiceMonitor), with no unknown field
// allowed: the packaged schemas accept any extra property, so a misspelt field
// (readOnlyRootFileSystem) would pass them; here every field a schema does not read is an
// error. Then the facts of the chart's production shape are asserted, those of every render
// and those of the named variant. Prints one line per variant and exits 1 on any failure.
// The packages come from <dir> (helm-check.sh installs them in its cache), not from the
// project's dependencies, so they are loaded by path and are untyped here.
/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-return */
import console from 'node:console';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import process from 'node:process';
import { parseArgs } from 'node:util';

const { values: options, positionals } = parseArgs({
  options: {
    modules: { type: 'string' },
    variant: { type: 'string', default: 'default' },
    'existing-secret': { type: 'string', default: '' },
  },
  allowPositionals: true,
});
if (!options.modules || positionals.length !== 1) {
  console.error(
    'usage: validate-k8s.mjs --modules <node_modules> --variant <name> [--existing-secret <name>] <render.yaml>',
  );
  process.exit(2);
}
const modules = options.modules;
const variant = options.variant;
const load = (path) => import(pathToFileURL(join(modules, path)).href);

const failures = [];
let checks = 0;
/** One assertion: counted, and its message kept when it fails. */
function check(condition, message) {
  checks += 1;
  if (!condition) failures.push(message);
  return Boolean(condition);
}

// ---------------------------------------------------------------------------------------
// The render, object by object.

const YAML = await load('yaml/dist/index.js');
const documents = YAML.parseAllDocuments(readFileSync(positionals[0], 'utf8'));
const objects = [];
for (const document of documents) {
  if (document.errors.length > 0) {
    failures.push(`YAML: ${document.errors.map((error) => error.message).join('; ')}`);
    continue;
  }
  const object = document.toJS();
  if (object !== null && object !== undefined) objects.push(object);
}
check(objects.length > 0, 'the render holds no object');
const label = (object) => `${object.kind}/${object.metadata?.name}`;

// ---------------------------------------------------------------------------------------
// Schema validation, with unknown fields.

/** Where each apiVersion's models are: the package and the folder of its group/version. */
function modelPath(apiVersion, kind) {
  if (apiVersion === 'monitoring.coreos.com/v1') {
    return `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${kind}.js`;
  }
  if (!/^([a-z0-9.-]+\/)?v[0-9]+((alpha|beta)[0-9]+)?$/.test(apiVersion)) return undefined;
  return `kubernetes-models/${apiVersion}/${kind}.js`;
}

/**
 * A proxy of `value` that records, in `seen`, every own property a validator reads. The
 * compiled validators read exactly the properties their schema declares (and every key of
 * a map), so what is left unread is unknown to the schema.
 */
function tracked(value, path, seen) {
  if (value === null || typeof value !== 'object') return value;
  const read = new Set();
  seen.push({ path, value, read });
  const children = new Map();
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key === 'string' && Object.hasOwn(target, key)) {
        read.add(key);
        if (!children.has(key)) children.set(key, tracked(target[key], `${path}.${key}`, seen));
        return children.get(key);
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const names = new Set();
for (const object of objects) {
  const where = label(object);
  check(
    !names.has(`${object.apiVersion} ${where}`),
    `${where}: rendered twice (${object.apiVersion})`,
  );
  names.add(`${object.apiVersion} ${where}`);
  const path = modelPath(object.apiVersion, object.kind);
  let model;
  try {
    model = path && (await load(path))[object.kind];
  } catch {
    model = undefined;
  }
  if (!check(model, `${where}: no schema for ${object.apiVersion} ${object.kind}`)) continue;
  const seen = [];
  try {
    model.prototype.validate.call(tracked(object, '', seen));
    checks += 1;
  } catch (error) {
    failures.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const unknown = [];
  for (const { path: at, value, read } of seen) {
    if (Array.isArray(value)) continue;
    for (const key of Object.keys(value)) if (!read.has(key)) unknown.push(`${at}.${key}`);
  }
  check(unknown.length === 0, `${where}: unknown field(s) ${unknown.join(', ')}`);

  const name = object.metadata?.name ?? '';
  const nameRule = object.kind === 'Service' ? DNS_LABEL : DNS_SUBDOMAIN;
  const longest = object.kind === 'Service' ? 63 : 253;
  check(
    nameRule.test(name) && name.length <= longest,
    `${where}: invalid name for a ${object.kind}`,
  );
  const labels = object.metadata?.labels ?? {};
  for (const key of ['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'helm.sh/chart']) {
    check(labels[key], `${where}: label ${key} missing`);
  }
  check(labels['app.kubernetes.io/managed-by'] === 'Helm', `${where}: managed-by is not Helm`);
  for (const [key, value] of Object.entries(labels)) {
    check(
      typeof value === 'string' && value.length <= 63 && LABEL_VALUE.test(value),
      `${where}: label ${key}=${String(value)} is not a valid label value`,
    );
  }
}

// ---------------------------------------------------------------------------------------
// Facts of every render.

const all = (kind) => objects.filter((object) => object.kind === kind);
const deployments = all('Deployment');
const jobs = all('Job');
const secrets = all('Secret');
const hooks = (object) => (object.metadata.annotations?.['helm.sh/hook'] ?? '').split(',');
const envOf = (container) => new Map((container.env ?? []).map((entry) => [entry.name, entry]));
const roleOf = (deployment) =>
  envOf(deployment.spec.template.spec.containers[0]).get('APP_ROLE')?.value;
const matches = (selector, labels) =>
  Object.entries(selector ?? {}).every(([key, value]) => labels?.[key] === value);
const podsOf = (selector) =>
  deployments.filter((deployment) => matches(selector, deployment.spec.template.metadata.labels));
const serving = deployments.filter((deployment) => ['api', 'all'].includes(roleOf(deployment)));
const secretName = options['existing-secret'] || secrets[0]?.metadata.name;

check(deployments.length > 0, 'no Deployment');
check(serving.length === 1, `one Deployment with APP_ROLE api or all expected, ${serving.length}`);
const api = serving[0];
const graceOf = (spec) => spec.terminationGracePeriodSeconds ?? 30;

for (const workload of [...deployments, ...jobs]) {
  const where = label(workload);
  const pod = workload.spec.template.spec;
  const isDeployment = workload.kind === 'Deployment';
  if (isDeployment) {
    check(
      matches(workload.spec.selector.matchLabels, workload.spec.template.metadata.labels),
      `${where}: the selector does not match the pod labels`,
    );
    check(
      workload.spec.strategy?.rollingUpdate?.maxUnavailable === 0 &&
        workload.spec.strategy?.rollingUpdate?.maxSurge === 1,
      `${where}: rolling update is not maxUnavailable 0, maxSurge 1`,
    );
    const spread = (pod.topologySpreadConstraints ?? []).find(
      (constraint) => constraint.topologyKey === 'kubernetes.io/hostname',
    );
    check(
      spread?.whenUnsatisfiable === 'ScheduleAnyway' &&
        matches(spread.labelSelector?.matchLabels, workload.spec.template.metadata.labels),
      `${where}: no ScheduleAnyway topology spread on kubernetes.io/hostname selecting its pods`,
    );
  }
  check(
    pod.securityContext?.runAsNonRoot === true && pod.securityContext?.runAsUser === 1000,
    `${where}: the pod does not run as non-root uid 1000`,
  );
  check(
    pod.securityContext?.seccompProfile?.type === 'RuntimeDefault',
    `${where}: the pod's seccompProfile is not RuntimeDefault`,
  );
  check(pod.automountServiceAccountToken === false, `${where}: service account token mounted`);
  const tmp = (pod.volumes ?? []).find((volume) => volume.emptyDir);
  for (const container of pod.containers) {
    const at = `${where} container ${container.name}`;
    const security = container.securityContext ?? {};
    check(security.runAsNonRoot === true, `${at}: runAsNonRoot is not true`);
    check(security.runAsUser === 1000, `${at}: runAsUser is not 1000`);
    check(security.readOnlyRootFilesystem === true, `${at}: readOnlyRootFilesystem is not true`);
    check(security.allowPrivilegeEscalation === false, `${at}: allowPrivilegeEscalation not false`);
    check(
      JSON.stringify(security.capabilities?.drop) === '["ALL"]' && !security.capabilities?.add,
      `${at}: capabilities do not drop ALL`,
    );
    check(
      security.seccompProfile?.type === 'RuntimeDefault',
      `${at}: seccompProfile not RuntimeDefault`,
    );
    check(
      tmp &&
        (container.volumeMounts ?? []).some(
          (mount) => mount.mountPath === '/tmp' && mount.name === tmp.name && !mount.readOnly,
        ),
      `${at}: no writable emptyDir at /tmp`,
    );
    check(
      (container.volumeMounts ?? []).every((mount) => mount.mountPath === '/tmp'),
      `${at}: writes somewhere other than /tmp`,
    );
    const resources = container.resources ?? {};
    check(
      resources.requests?.cpu && resources.requests?.memory && resources.limits?.memory,
      `${at}: CPU and memory requests and a memory limit expected`,
    );
    const env = container.env ?? [];
    const duplicate = env.map((entry) => entry.name).filter((n, i, list) => list.indexOf(n) !== i);
    check(duplicate.length === 0, `${at}: environment variable(s) set twice: ${duplicate}`);
    const byName = envOf(container);
    const databaseUrl = byName.get('DATABASE_URL')?.valueFrom?.secretKeyRef;
    check(
      databaseUrl?.name === secretName &&
        databaseUrl?.key === 'DATABASE_URL' &&
        databaseUrl?.optional !== true,
      `${at}: DATABASE_URL does not come (required) from Secret ${secretName}`,
    );
    check(
      (container.envFrom ?? []).some((source) => source.secretRef?.name === secretName),
      `${at}: the Secret ${secretName} is not in envFrom`,
    );
    if (isDeployment) {
      check(
        byName.get('DB_MIGRATE_ON_START')?.value === 'false',
        `${at}: DB_MIGRATE_ON_START is not "false"`,
      );
      const http = (container.ports ?? []).find((port) => port.name === 'http');
      check(http?.containerPort === 3000, `${at}: no port http on 3000`);
      const probe = (kind, path) => {
        const get = container[kind]?.httpGet;
        check(
          get?.path === path && get?.port === 'http',
          `${at}: ${kind} is not GET ${path} on port http`,
        );
      };
      probe('readinessProbe', '/health/ready');
      probe('livenessProbe', '/health/live');
      probe('startupProbe', '/health/live');
      const drain = Number(byName.get('SHUTDOWN_DRAIN_MS')?.value);
      const timeout = Number(byName.get('SHUTDOWN_TIMEOUT_MS')?.value);
      check(
        Number.isInteger(drain) && Number.isInteger(timeout),
        `${at}: SHUTDOWN_DRAIN_MS and SHUTDOWN_TIMEOUT_MS not set`,
      );
      check(
        graceOf(pod) * 1000 > drain + timeout,
        `${at}: terminationGracePeriodSeconds ${graceOf(pod)} is not longer than SHUTDOWN_DRAIN_MS + SHUTDOWN_TIMEOUT_MS (${drain + timeout} ms)`,
      );
    }
  }
}

// The Service: the pods that take requests, and only those.
const services = all('Service').filter((service) => service.spec.clusterIP !== 'None');
check(services.length === 1, `one ClusterIP Service expected, ${services.length}`);
for (const service of services) {
  const where = label(service);
  const selected = podsOf(service.spec.selector);
  check(
    selected.length === 1 && selected[0] === api,
    `${where}: selects ${selected.map(label).join(', ') || 'no Deployment'}, not only ${label(api)}`,
  );
  check((service.spec.type ?? 'ClusterIP') === 'ClusterIP', `${where}: type is not ClusterIP`);
  const port = service.spec.ports?.[0];
  check(
    service.spec.ports?.length === 1 && port.port === 80 && port.targetPort === 'http',
    `${where}: not port 80 -> targetPort http`,
  );
}

// The disruption budget of the API.
const budgets = all('PodDisruptionBudget');
check(budgets.length === 1, `one PodDisruptionBudget expected, ${budgets.length}`);
for (const budget of budgets) {
  const where = label(budget);
  check(budget.apiVersion === 'policy/v1', `${where}: not policy/v1`);
  const selected = podsOf(budget.spec.selector?.matchLabels);
  check(selected.length === 1 && selected[0] === api, `${where}: does not select the API only`);
  check(
    budget.spec.maxUnavailable === 1 || budget.spec.minAvailable >= 1,
    `${where}: neither maxUnavailable 1 nor minAvailable >= 1`,
  );
}

// The chart-made Secret and the migrations Job: hooks, in that order.
for (const job of jobs) {
  const where = label(job);
  const annotations = job.metadata.annotations ?? {};
  check(
    hooks(job).includes('pre-install') && hooks(job).includes('pre-upgrade'),
    `${where}: not a pre-install,pre-upgrade hook`,
  );
  const policy = (annotations['helm.sh/hook-delete-policy'] ?? '').split(',');
  check(
    policy.includes('before-hook-creation') && policy.includes('hook-succeeded'),
    `${where}: hook-delete-policy is not before-hook-creation,hook-succeeded`,
  );
  check(job.spec.backoffLimit >= 0, `${where}: no backoffLimit`);
  check(job.spec.activeDeadlineSeconds > 0, `${where}: no activeDeadlineSeconds`);
  const container = job.spec.template.spec.containers[0];
  check(
    JSON.stringify(container.command) === '["node","dist/migrate.main.js"]',
    `${where}: command is not node dist/migrate.main.js`,
  );
  check(job.spec.template.spec.restartPolicy === 'Never', `${where}: restartPolicy not Never`);
  check(container.image === api.spec.template.spec.containers[0].image, `${where}: other image`);
  for (const secret of secrets) {
    const weight = (object) => Number(object.metadata.annotations?.['helm.sh/hook-weight'] ?? 0);
    check(
      hooks(secret).includes('pre-install') &&
        hooks(secret).includes('pre-upgrade') &&
        weight(secret) < weight(job),
      `${label(secret)}: not a pre-install,pre-upgrade hook weighing less than ${where}`,
    );
    check(
      (secret.metadata.annotations?.['helm.sh/hook-delete-policy'] ?? '') ===
        'before-hook-creation',
      `${label(secret)}: hook-delete-policy is not before-hook-creation (the pods need it kept)`,
    );
  }
}
check(jobs.length === 1, `one migrations Job expected, ${jobs.length}`);

// Every autoscaler targets the API Deployment and keeps at least two pods.
for (const autoscaler of all('HorizontalPodAutoscaler')) {
  const where = label(autoscaler);
  check(autoscaler.apiVersion === 'autoscaling/v2', `${where}: not autoscaling/v2`);
  check(
    autoscaler.spec.scaleTargetRef.kind === 'Deployment' &&
      autoscaler.spec.scaleTargetRef.name === api.metadata.name,
    `${where}: does not target ${label(api)}`,
  );
  check(autoscaler.spec.minReplicas >= 2, `${where}: minReplicas below 2`);
  check(api.spec.replicas === undefined, `${label(api)}: sets replicas beside an autoscaler`);
}
if (all('HorizontalPodAutoscaler').length === 0) {
  check(api.spec.replicas >= 2, `${label(api)}: ${api.spec.replicas} replicas, at least 2 needed`);
}

// A ServiceMonitor scrapes /metrics of every pod, worker included.
for (const monitor of all('ServiceMonitor')) {
  const where = label(monitor);
  const targets = all('Service').filter((service) =>
    matches(monitor.spec.selector?.matchLabels, service.metadata.labels),
  );
  check(targets.length === 1, `${where}: selects ${targets.length} Services, 1 expected`);
  const endpoint = monitor.spec.endpoints?.[0];
  check(
    endpoint?.path === '/metrics' && endpoint?.port === 'http',
    `${where}: does not scrape /metrics on port http`,
  );
  for (const target of targets) {
    check(
      target.spec.ports.some((port) => port.name === 'http'),
      `${where}: ${label(target)} has no port http`,
    );
    check(
      podsOf(target.spec.selector).length === deployments.length,
      `${where}: ${label(target)} does not select every Deployment's pods`,
    );
  }
}

// A NetworkPolicy: ingress on 3000 only; egress to DNS, the database and Redis.
for (const policy of all('NetworkPolicy')) {
  const where = label(policy);
  check(
    podsOf(policy.spec.podSelector?.matchLabels).length === deployments.length,
    `${where}: does not select every Deployment's pods`,
  );
  check(
    JSON.stringify(policy.spec.policyTypes) === '["Ingress","Egress"]',
    `${where}: not both Ingress and Egress`,
  );
  const ingressPorts = (policy.spec.ingress ?? []).flatMap((rule) => rule.ports ?? [{}]);
  check(
    ingressPorts.length > 0 && ingressPorts.every((port) => port.port === 3000),
    `${where}: ingress is not to port 3000 only`,
  );
  const egressPorts = new Set(
    (policy.spec.egress ?? []).flatMap((rule) => (rule.ports ?? []).map((port) => port.port)),
  );
  for (const port of [53, 5432, 6432, 6379]) {
    check(egressPorts.has(port), `${where}: no egress to port ${port}`);
  }
}

// ---------------------------------------------------------------------------------------
// The variant's own facts.

const expectations = {
  // The production shape: split roles, the chart-made Secret, nothing optional.
  default() {
    check(roleOf(api) === 'api', `${label(api)}: APP_ROLE is not api`);
    const workers = deployments.filter((deployment) => roleOf(deployment) === 'worker');
    check(workers.length === 1, `one worker Deployment expected, ${workers.length}`);
    for (const worker of workers) {
      check(worker.spec.replicas === 1, `${label(worker)}: ${worker.spec.replicas} replicas, 1`);
    }
    check(deployments.length === 2, `2 Deployments expected, ${deployments.length}`);
    check(secrets.length === 1, `one chart-made Secret expected, ${secrets.length}`);
    check(
      api.spec.template.metadata.annotations?.['checksum/secret'],
      `${label(api)}: no checksum/secret annotation (pods would not roll on a Secret change)`,
    );
    for (const kind of ['HorizontalPodAutoscaler', 'ServiceMonitor', 'NetworkPolicy']) {
      check(all(kind).length === 0, `${kind} rendered, but it is off by default`);
    }
    check(
      api.spec.template.spec.containers[0].image === 'plant-store:1.0.0',
      `${label(api)}: image is not plant-store:1.0.0 (the chart's appVersion)`,
    );
  },
  'no-split'() {
    check(deployments.length === 1, `one Deployment expected, ${deployments.length}`);
    check(roleOf(api) === 'all', `${label(api)}: APP_ROLE is not all`);
  },
  'existing-secret'() {
    check(secrets.length === 0, 'a Secret rendered beside secret.existingSecret');
    check(secretName === options['existing-secret'], 'the pods do not read the existing Secret');
  },
  hpa() {
    check(all('HorizontalPodAutoscaler').length === 1, 'no HorizontalPodAutoscaler');
  },
  monitoring() {
    check(all('ServiceMonitor').length === 1, 'no ServiceMonitor');
    check(all('NetworkPolicy').length === 1, 'no NetworkPolicy');
  },
};
if (check(expectations[variant], `unknown variant ${variant}`)) expectations[variant]();

const counts = [...new Set(objects.map((object) => object.kind))]
  .map((kind) => `${all(kind).length} ${kind}`)
  .join(', ');
if (failures.length > 0) {
  console.error(`${variant}: ${failures.length} of ${checks} checks FAILED (${counts})`);
  for (const failure of failures) console.error(`  - ${failure}`);
  process.exit(1);
}
console.log(`${variant}: ${objects.length} objects valid (${counts}); ${checks} checks passed`);
