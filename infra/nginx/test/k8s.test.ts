import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable, repoRoot } from '@app/devstack';
import { parseAllDocuments } from 'yaml';
import { DECLARED } from './stack.js';

/**
 * The Kubernetes manifests as `kubectl kustomize infra/k8s/overlays/production` renders them, from
 * a copy of infra/k8s given a filled-in secrets.env (the real one is never committed).
 * Without kubectl on PATH the base files are read directly (the properties checked here are all
 * in the base; only the overlay's autoscaler floor is then not seen).
 */
type Manifest = { kind: string; metadata: { name: string }; spec?: any; data?: Record<string, string> };

const k8s = join(repoRoot, 'infra', 'k8s');
const kubectl = findExecutable('kubectl');

/** `kubectl kustomize` of the production overlay in a copy of infra/k8s; `secrets` is written as its secrets.env (and the webhook keys as webhook-keys.env). */
function renderProduction(
  secrets: string | undefined,
  webhookKeys: string | null = WEBHOOK_KEYS,
): { status: number | null; stdout: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-'));
  try {
    cpSync(k8s, dir, { recursive: true, filter: (src) => !src.endsWith('.env') || src.endsWith('.example.env') });
    if (secrets !== undefined) writeFileSync(join(dir, 'overlays', 'production', 'secrets.env'), secrets);
    if (webhookKeys !== null) writeFileSync(join(dir, 'overlays', 'production', 'webhook-keys.env'), webhookKeys);
    const run = spawnSync(kubectl!, ['kustomize', join(dir, 'overlays', 'production')], { encoding: 'utf8' });
    return { status: run.status, stdout: run.stdout, stderr: run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const REAL_SECRETS = [
  'TASKS_DATABASE_URL=postgres://tasks:s3cret-a@db.internal:5432/product',
  'MEETINGS_DATABASE_URL=postgres://meetings:s3cret-b@db.internal:5432/product',
  'CLIPBOARD_DATABASE_URL=postgres://clipboard:s3cret-c@db.internal:5432/product',
  'REDIS_URL=rediss://redis.internal:6380',
  'POSTGRES_ADMIN_URL=postgres://postgres:s3cret-d@db.internal:5432/product',
].join('\n');

const WEBHOOK_KEYS = ['TASKS', 'MEETINGS', 'CLIPBOARD']
  .map(
    (svc) =>
      `${svc}_WEBHOOK_SECRET_KEY=${randomBytes(32).toString('base64')}\n${svc}_WEBHOOK_SECRET_KEYS_OLD=\n${svc}_MCP_SESSION_SECRET=${randomBytes(32).toString('base64')}`,
  )
  .join('\n');

function manifests(): Manifest[] {
  if (kubectl) {
    const rendered = renderProduction(REAL_SECRETS);
    if (rendered.status !== 0) throw new Error(`kubectl kustomize failed: ${rendered.stderr}`);
    return parseAllDocuments(rendered.stdout).map((d) => d.toJS() as Manifest);
  }
  const base = parseAllDocuments(readFileSync(join(k8s, 'base', 'kustomization.yaml'), 'utf8'))[0]!.toJS() as {
    resources: string[];
    configMapGenerator: Array<{ name: string; literals?: string[] }>;
  };
  const files = base.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(k8s, 'base', file), 'utf8')).map((d) => d.toJS() as Manifest),
  );
  const generated = base.configMapGenerator.map((g) => ({
    kind: 'ConfigMap',
    metadata: { name: g.name },
    data: Object.fromEntries((g.literals ?? []).map((l) => l.split('=', 2) as [string, string])),
  }));
  return [...files, ...generated];
}

const all = manifests();
const find = (kind: string, name: string) => all.find((m) => m.kind === kind && m.metadata.name === name);
/** Each declared service's port. */
const SERVICES: Record<string, number> = Object.fromEntries(DECLARED.map(({ name, port }) => [name, port]));

describe(`the Kubernetes manifests (${kubectl ? 'kubectl kustomize of the production overlay' : 'base files; kubectl is not on PATH'})`, () => {
  describe.each(Object.entries(SERVICES))('%s', (svc, port) => {
    const deployment = find('Deployment', svc);
    const container = deployment?.spec.template.spec.containers[0];

    it('has a Deployment whose replica count the autoscaler owns', () => {
      expect(deployment).toBeDefined();
      expect(deployment!.spec.replicas).toBeUndefined();
    });

    it('is ready on /readyz and alive on /healthz', () => {
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
      expect(container.ports).toEqual([{ name: 'http', containerPort: port }]);
    });

    it('requests CPU and memory and is limited in memory', () => {
      expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      expect(container.resources.limits.memory).toEqual(expect.any(String));
    });

    it('runs with sign-up closed', () => {
      const configMaps = container.envFrom.map((e: { configMapRef: { name: string } }) => e.configMapRef.name);
      const data = Object.assign(
        {},
        ...all.filter((m) => m.kind === 'ConfigMap' && configMaps.includes(m.metadata.name)).map((m) => m.data),
      );
      expect(data.SIGNUP).toBe('closed');
      expect(data.COOKIE_SECURE).toBe('always');
    });

    it('is scaled by a HorizontalPodAutoscaler on CPU, from at least 2 pods', () => {
      const hpa = find('HorizontalPodAutoscaler', svc);
      expect(hpa?.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: svc });
      expect(hpa!.spec.minReplicas).toBeGreaterThanOrEqual(kubectl ? 3 : 2);
      expect(hpa!.spec.maxReplicas).toBeGreaterThan(hpa!.spec.minReplicas);
      expect(hpa!.spec.metrics).toEqual([
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } },
        },
      ]);
    });

    it('keeps pods through a drain with a PodDisruptionBudget', () => {
      const pdb = find('PodDisruptionBudget', svc);
      expect(pdb?.spec.selector).toEqual({ matchLabels: { app: svc } });
      expect(pdb!.spec.maxUnavailable).toBe(1);
    });

    it('takes connections only from the gateway, and reaches only Postgres, Redis and DNS', () => {
      const policy = find('NetworkPolicy', svc);
      expect(policy?.spec.podSelector).toEqual({ matchLabels: { app: svc } });
      expect(policy!.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(policy!.spec.ingress).toEqual([
        { from: [{ podSelector: { matchLabels: { app: 'gateway' } } }], ports: [{ protocol: 'TCP', port }] },
      ]);
      const egressPorts = policy!.spec.egress.flatMap((rule: { ports: Array<{ port: number }> }) =>
        rule.ports.map((p) => p.port),
      );
      expect(egressPorts.sort()).toEqual([53, 53, 5432, 6379].sort());
    });
  });

  describe.each([
    ...DECLARED.flatMap(({ name, roles }) => [name, ...(roles.includes('worker') ? [`${name}-worker`] : [])]),
    'gateway',
  ])('%s pods', (name) => {
    const pod = () => find('Deployment', name)!.spec.template.spec;

    it('mount no service-account token and run under seccomp RuntimeDefault as a non-root user', () => {
      expect(pod().automountServiceAccountToken).toBe(false);
      expect(pod().securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod().securityContext.runAsUser).toBeGreaterThan(0);
    });

    it('run every container without capabilities, privilege escalation or a writable root filesystem', () => {
      for (const container of pod().containers) {
        expect(container.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.securityContext.runAsUser ?? pod().securityContext.runAsUser).toBeGreaterThan(0);
        expect(container.securityContext.privileged).toBeUndefined();
      }
    });
  });

  it('runs the gateway from the unprivileged nginx image on a port above 1024, with writable config and temp directories', () => {
    const spec = find('Deployment', 'gateway')!.spec.template.spec;
    const nginx = spec.containers[0];
    expect(nginx.image).toMatch(/^nginxinc\/nginx-unprivileged:/);
    expect(nginx.ports[0].containerPort).toBeGreaterThan(1024);
    const mounts = Object.fromEntries(
      nginx.volumeMounts.map((m: { name: string; mountPath: string }) => [m.mountPath, m.name]),
    );
    for (const path of ['/tmp', '/etc/nginx/conf.d']) {
      const volume = spec.volumes.find((v: { name: string }) => v.name === mounts[path]);
      expect(volume?.emptyDir).toBeDefined();
    }
  });

  it('terminates TLS at an Ingress in front of the gateway, which is not exposed on its own', () => {
    const ingress = find('Ingress', 'gateway');
    expect(ingress?.spec.tls).toEqual([{ hosts: expect.any(Array), secretName: expect.any(String) }]);
    const hosts = ingress!.spec.tls[0].hosts as string[];
    for (const rule of ingress!.spec.rules) {
      expect(hosts).toContain(rule.host);
      expect(rule.http.paths.map((p: any) => p.backend.service.name)).toEqual(['gateway']);
    }
    expect(find('Service', 'gateway')!.spec.type ?? 'ClusterIP').toBe('ClusterIP');
  });

  it('marks session cookies Secure (COOKIE_SECURE=always)', () => {
    const configMap = all.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith('service-config'));
    expect(configMap?.data?.COOKIE_SECURE).toBe('always');
  });

  it('names the Ingress host over https as the public origin of the OAuth and MCP metadata', () => {
    const configMap = all.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith('service-config'));
    const hosts = find('Ingress', 'gateway')!.spec.tls[0].hosts as string[];
    expect(hosts.map((h) => `https://${h}`)).toContain(configMap?.data?.PUBLIC_URL);
  });

  (kubectl ? it : it.skip)(
    'refuses to build the production overlay without a real secrets.env (never from secrets.example.env)',
    () => {
      const missing = renderProduction(undefined);
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toContain('secrets.env');
      const overlay = readFileSync(join(k8s, 'overlays', 'production', 'kustomization.yaml'), 'utf8');
      expect(overlay).not.toMatch(/^\s*-\s*secrets\.example\.env/m);
      const rendered = all.find((m) => m.kind === 'Secret') as { data?: Record<string, string> } | undefined;
      const values = Object.values(rendered?.data ?? {}).map((v) => Buffer.from(v, 'base64').toString());
      expect(values.join('\n')).not.toContain('change-me');
    },
  );

  it('does not commit a secrets.env', () => {
    const ignored = readFileSync(join(repoRoot, '.gitignore'), 'utf8');
    expect(ignored).toContain('infra/k8s/overlays/production/secrets.env');
    expect(ignored).toContain('infra/k8s/overlays/production/webhook-keys.env');
  });

  const serviceConfig = () =>
    all.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith('service-config'))!.data!;
  const envOf = (deployment: string) =>
    Object.fromEntries(
      (
        find('Deployment', deployment)!.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>
      ).map((e) => [e.name, e.value]),
    );

  it('trusts exactly one hop in the services (TRUST_PROXY=1, the gateway), which only the Ingress controller reaches', () => {
    expect(serviceConfig().TRUST_PROXY).toBe('1');
    expect(find('NetworkPolicy', 'gateway')!.spec.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } }],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
    ]);
  });

  (kubectl ? it : it.skip)(
    'has the gateway believe X-Forwarded-For only from the Ingress controller range the overlay names, never a whole /8',
    () => {
      const range = envOf('gateway').TRUSTED_PROXIES!;
      expect(range).toMatch(/^[0-9a-f.:]+\/\d+$/);
      // At most 65,536 addresses: an IPv4 /16 or narrower.
      expect(Number(range.split('/')[1])).toBeGreaterThanOrEqual(range.includes(':') ? 112 : 16);
      expect(readFileSync(join(k8s, 'overlays', 'production', 'kustomization.yaml'), 'utf8')).toMatch(
        /PLACEHOLDER[^]*SNAT/,
      );
      expect(
        find('Deployment', 'gateway')!.spec.template.spec.containers[0].env.find(
          (e: { name: string }) => e.name === 'NGINX_ENVSUBST_FILTER',
        ).value,
      ).toContain('TRUSTED_PROXIES');
    },
  );

  it("warns in the gateway pod's log at start when TRUSTED_PROXIES holds a range wider than a /16", () => {
    const spec = find('Deployment', 'gateway')!.spec.template.spec;
    const mount = spec.containers[0].volumeMounts.find((m: { mountPath: string }) =>
      m.mountPath.startsWith('/docker-entrypoint.d/'),
    );
    expect(mount).toMatchObject({
      mountPath: '/docker-entrypoint.d/15-trusted-proxies.sh',
      subPath: '15-trusted-proxies.sh',
    });
    const volume = spec.volumes.find((v: { name: string }) => v.name === mount.name);
    // The image's entrypoint runs only executable scripts (0555 = 365).
    expect(volume.configMap.defaultMode).toBe(365);
    const script = all.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith(volume.configMap.name))!.data![
      mount.subPath
    ]!;
    const startLog = (trusted: string) =>
      spawnSync('sh', ['-c', script], { env: { PATH: process.env.PATH, TRUSTED_PROXIES: trusted }, encoding: 'utf8' });
    const wide = startLog('10.0.0.0/8');
    expect(wide.status).toBe(0);
    expect(wide.stderr).toContain(
      'gateway: warning: TRUSTED_PROXIES range 10.0.0.0/8 holds more than 65,536 addresses (wider than a /16)',
    );
    if (kubectl) expect(startLog(envOf('gateway').TRUSTED_PROXIES!).stderr).toBe('');
  });

  it('accepts browser sessions from its own public origin: ALLOWED_ORIGINS holds PUBLIC_URL, the Ingress host over https', () => {
    const config = serviceConfig();
    expect(config.ALLOWED_ORIGINS!.split(',')).toContain(config.PUBLIC_URL);
    const ingress = find('Ingress', 'gateway')!;
    expect(new URL(config.PUBLIC_URL!).host).toBe(ingress.spec.rules[0].host);
  });

  describe.each(Object.entries(SERVICES))('%s webhook workers', (svc, port) => {
    it('run as their own Deployment (SERVICE_ROLE=worker), the API pods as SERVICE_ROLE=api, scaled on queue age', () => {
      expect(envOf(svc).SERVICE_ROLE).toBe('api');
      expect(envOf(`${svc}-worker`).SERVICE_ROLE).toBe('worker');
      expect(envOf(`${svc}-worker`)[`${svc.toUpperCase()}_PORT`]).toBe(String(port));
      const hpa = find('HorizontalPodAutoscaler', `${svc}-worker`)!;
      expect(hpa.spec.metrics[0].pods.metric.name).toBe('webhook_queue_age_seconds');
    });

    it('take no connections and reach public addresses on 80 and 443, no private range, besides Postgres, Redis and DNS', () => {
      const policy = find('NetworkPolicy', `${svc}-worker`)!;
      expect(policy.spec.podSelector).toEqual({ matchLabels: { app: `${svc}-worker` } });
      expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(policy.spec.ingress).toBeUndefined();
      type Rule = { to?: Array<{ ipBlock?: { cidr: string; except?: string[] } }>; ports: Array<{ port: number }> };
      const web = (policy.spec.egress as Rule[]).filter((r) => r.ports.some((p) => p.port === 80 || p.port === 443));
      expect(web).toHaveLength(1);
      expect(web[0]!.ports.map((p) => p.port).sort()).toEqual([443, 80]);
      const blocks = Object.fromEntries(web[0]!.to!.map((t) => [t.ipBlock!.cidr, t.ipBlock!.except ?? []]));
      expect(Object.keys(blocks).sort()).toEqual(['0.0.0.0/0', '::/0']);
      for (const range of [
        '10.0.0.0/8',
        '172.16.0.0/12',
        '192.168.0.0/16',
        '127.0.0.0/8',
        '169.254.0.0/16',
        '100.64.0.0/10',
      ])
        expect(blocks['0.0.0.0/0']).toContain(range);
      for (const range of ['::1/128', 'fc00::/7', 'fe80::/10', '::ffff:0:0/96'])
        expect(blocks['::/0']).toContain(range);
      // The API pods keep the narrow policy: no connection to any receiver.
      const apiPorts = find('NetworkPolicy', svc)!.spec.egress.flatMap((rule: { ports: Array<{ port: number }> }) =>
        rule.ports.map((p) => p.port),
      );
      expect(apiPorts).not.toContain(443);
    });
  });

  it("gives every secretKeyRef a Secret of that name (the overlay's generated one included)", () => {
    const secrets = new Set(all.filter((m) => m.kind === 'Secret').map((m) => m.metadata.name));
    const refs = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        const ref = (node as { secretKeyRef?: { name: string } }).secretKeyRef;
        if (ref) refs.add(ref.name);
        Object.values(node).forEach(walk);
      }
    };
    walk(all);
    expect(refs.size).toBeGreaterThan(0);
    if (kubectl) expect([...refs].filter((name) => !secrets.has(name))).toEqual([]);
  });

  (kubectl ? it : it.skip)(
    'gives every secretKeyRef a key its Secret holds (or marks it optional), and refuses to build without webhook-keys.env',
    () => {
      const secrets = new Map(
        all.filter((m) => m.kind === 'Secret').map((m) => [m.metadata.name, Object.keys(m.data ?? {})]),
      );
      const missing: string[] = [];
      const walk = (node: unknown): void => {
        if (Array.isArray(node)) node.forEach(walk);
        else if (node && typeof node === 'object') {
          const ref = (node as { secretKeyRef?: { name: string; key: string; optional?: boolean } }).secretKeyRef;
          if (ref && !ref.optional && !secrets.get(ref.name)?.includes(ref.key)) missing.push(`${ref.name}/${ref.key}`);
          Object.values(node).forEach(walk);
        }
      };
      walk(all);
      expect(missing).toEqual([]);
      const without = renderProduction(REAL_SECRETS, null);
      expect(without.status).not.toBe(0);
      expect(without.stderr).toContain('webhook-keys.env');
    },
  );

  it("gives each service's API and worker pods their own WEBHOOK_SECRET_KEY, and its API pods their MCP_SESSION_SECRET, from a Secret no Job reads", () => {
    const jobs = all.filter((m) => m.kind === 'Job' || m.kind === 'CronJob');
    expect(jobs.length).toBeGreaterThan(0);
    expect(JSON.stringify(jobs)).not.toContain('webhook-secret-keys');
    for (const svc of Object.keys(SERVICES)) {
      for (const deployment of [svc, `${svc}-worker`]) {
        const env = find('Deployment', deployment)!.spec.template.spec.containers[0].env as Array<{
          name: string;
          valueFrom?: { secretKeyRef?: { name: string; key: string } };
        }>;
        expect(env.find((e) => e.name === 'WEBHOOK_SECRET_KEY')?.valueFrom?.secretKeyRef).toEqual({
          name: 'webhook-secret-keys',
          key: `${svc.toUpperCase()}_WEBHOOK_SECRET_KEY`,
        });
        expect(env.find((e) => e.name === 'WEBHOOK_SECRET_KEYS_OLD')?.valueFrom?.secretKeyRef).toMatchObject({
          name: 'webhook-secret-keys',
          optional: true,
        });
        const mcp = env.find((e) => e.name === 'MCP_SESSION_SECRET')?.valueFrom?.secretKeyRef;
        expect(mcp).toEqual(
          deployment === svc
            ? { name: 'webhook-secret-keys', key: `${svc.toUpperCase()}_MCP_SESSION_SECRET` }
            : undefined,
        );
      }
    }
  });

  it('denies every other connection in the namespace by default', () => {
    expect(find('NetworkPolicy', 'default-deny')?.spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
    });
  });

  it('lets the gateway reach each service on its port', () => {
    const egress = find('NetworkPolicy', 'gateway')!.spec.egress as Array<{
      to: Array<{ podSelector?: { matchLabels: { app?: string } } }>;
      ports: Array<{ port: number }>;
    }>;
    for (const [svc, port] of Object.entries(SERVICES)) {
      expect(egress).toContainEqual({
        to: [{ podSelector: { matchLabels: { app: svc } } }],
        ports: [{ protocol: 'TCP', port }],
      });
    }
    expect(find('PodDisruptionBudget', 'gateway')).toBeDefined();
  });
});

describe(`day-two operations in the manifests (${kubectl ? 'kubectl kustomize of the production overlay' : 'base files; kubectl is not on PATH'})`, () => {
  const podOf = (m: Manifest) => (m.kind === 'CronJob' ? m.spec.jobTemplate.spec.template.spec : m.spec.template.spec);
  const deployments = all.filter((m) => m.kind === 'Deployment');
  const configFor = (container: { envFrom?: Array<{ configMapRef?: { name: string } }> }) => {
    const names = (container.envFrom ?? []).flatMap((e) => (e.configMapRef ? [e.configMapRef.name] : []));
    return Object.assign(
      {},
      ...all.filter((m) => m.kind === 'ConfigMap' && names.includes(m.metadata.name)).map((m) => m.data),
    ) as Record<string, string>;
  };

  (kubectl ? it : it.skip)('gives every container of every Deployment a startupProbe', () => {
    expect(deployments.length).toBeGreaterThanOrEqual(4);
    for (const d of deployments) {
      for (const c of d.spec.template.spec.containers)
        expect([d.metadata.name, c.name, c.startupProbe]).toEqual([d.metadata.name, c.name, expect.any(Object)]);
    }
  });

  it('keeps the gateway alive on a liveness probe', () => {
    expect(find('Deployment', 'gateway')!.spec.template.spec.containers[0].livenessProbe).toEqual(
      expect.objectContaining({ tcpSocket: { port: 'http' } }),
    );
  });

  it('lets no service pod migrate its schema: MIGRATE_ON_START=0 everywhere, the waiting bounded by the startupProbe', () => {
    for (const d of deployments.filter((m) => m.metadata.name !== 'gateway')) {
      for (const c of d.spec.template.spec.containers) {
        const env = Object.fromEntries((c.env ?? []).map((e: { name: string; value?: string }) => [e.name, e.value]));
        expect([d.metadata.name, env.MIGRATE_ON_START ?? configFor(c).MIGRATE_ON_START]).toEqual([
          d.metadata.name,
          '0',
        ]);
      }
    }
  });

  it.each(Object.keys(SERVICES))(
    "migrates %s with a Job running `admin migrate` from the Deployment's image, as the service's role",
    (svc) => {
      const job = find('Job', `${svc}-migrate`);
      const container = job?.spec.template.spec.containers[0];
      expect(container.command).toEqual([
        'node',
        'node_modules/@app/auth/dist/runtime/main.js',
        'admin',
        'dist/service.js',
        'migrate',
      ]);
      expect(container.image).toBe(find('Deployment', svc)!.spec.template.spec.containers[0].image);
      expect(container.env).toContainEqual({
        name: 'DATABASE_URL',
        valueFrom: {
          secretKeyRef: { name: expect.stringMatching(/^product-secrets/), key: `${svc.toUpperCase()}_DATABASE_URL` },
        },
      });
      // Not counted by the service's Service, autoscaler or disruption budget.
      expect(job!.spec.template.metadata.labels.app).toBeUndefined();
    },
  );

  it("creates what compose's init.sql creates, with a Job running the same file from a ConfigMap", () => {
    const copy = readFileSync(join(k8s, 'base', 'postgres-init.sql'), 'utf8');
    expect(copy).toBe(readFileSync(join(repoRoot, 'infra', 'postgres', 'init.sql'), 'utf8'));
    const job = find('Job', 'postgres-init')!;
    const volume = job.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'init');
    const configMap = all.find((m) => m.kind === 'ConfigMap' && m.metadata.name === volume.configMap.name);
    if (kubectl) expect(configMap?.data?.['init.sql']).toBe(copy);
    expect(job.spec.template.spec.containers[0].args[0]).toContain('-f /init/init.sql');
  });

  it("backs every service's schemas up nightly in the archive format `admin restore` reads", () => {
    const cron = find('CronJob', 'backup')!;
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    const script = podOf(cron).containers[0].args[0] as string;
    expect(script).toContain(`for svc in ${Object.keys(SERVICES).join(' ')};`);
    expect(script).toContain('--format=custom --no-owner --no-privileges');
    expect(script).toContain('--schema="$svc" --schema="${svc}_worker"');
  });

  it('runs the operations pods like the others: non-root, no capabilities, no token, Postgres and DNS only', () => {
    const pods = all.filter((m) => m.kind === 'Job' || m.kind === 'CronJob').map(podOf);
    expect(pods).toHaveLength(5);
    for (const pod of pods) {
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      for (const c of pod.containers)
        expect(c.securityContext).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
    }
    const policy = find('NetworkPolicy', 'operations')!;
    const ports = policy.spec.egress.flatMap((rule: { ports: Array<{ port: number }> }) =>
      rule.ports.map((p) => p.port),
    );
    expect(ports.sort()).toEqual([53, 53, 5432]);
  });

  it('gives the gateway the JSON access log with the request id, trace id and upstream time', () => {
    const spec = find('Deployment', 'gateway')!.spec.template.spec;
    const mount = spec.containers[0].volumeMounts.find(
      (m: { mountPath: string }) => m.mountPath === '/etc/nginx/nginx.conf',
    );
    expect(mount).toMatchObject({ subPath: 'nginx.conf' });
    const conf = readFileSync(join(repoRoot, 'infra', 'nginx', 'nginx.conf'), 'utf8');
    expect(conf).toMatch(/log_format gateway_json escape=json/);
    for (const field of ['$gw_request_id', '$gw_trace_id', '$upstream_response_time']) expect(conf).toContain(field);
    expect(conf).toContain('access_log /dev/stdout gateway_json;');
  });
});

describe('the CI workflows', () => {
  const dir = join(repoRoot, '.github', 'workflows');
  const workflows = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));

  it.each(workflows)('%s reads the repository only and bounds every job in time', (file) => {
    const workflow = parseAllDocuments(readFileSync(join(dir, file), 'utf8'))[0]!.toJS() as {
      permissions?: unknown;
      jobs: Record<string, { permissions?: unknown; 'timeout-minutes'?: number }>;
    };
    expect(workflow.permissions).toEqual({ contents: 'read' });
    for (const [name, job] of Object.entries(workflow.jobs)) {
      expect([name, job.permissions ?? workflow.permissions]).toEqual([name, { contents: 'read' }]);
      expect([name, job['timeout-minutes']]).toEqual([name, expect.any(Number)]);
      expect(job['timeout-minutes']).toBeLessThanOrEqual(60);
    }
  });
});
