import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findExecutable, repoRoot } from '@app/devstack';
import { parseAllDocuments } from 'yaml';

/**
 * The Kubernetes manifests as `kubectl kustomize infra/k8s/overlays/production` renders them.
 * Without kubectl on PATH the base files are read directly (the properties checked here are all
 * in the base; only the overlay's autoscaler floor is then not seen).
 */
type Manifest = { kind: string; metadata: { name: string }; spec?: any; data?: Record<string, string> };

const k8s = join(repoRoot, 'infra', 'k8s');
const kubectl = findExecutable('kubectl');

function manifests(): Manifest[] {
  if (kubectl) {
    const rendered = execFileSync(kubectl, ['kustomize', join(k8s, 'overlays', 'production')], { encoding: 'utf8' });
    return parseAllDocuments(rendered).map((d) => d.toJS() as Manifest);
  }
  const base = parseAllDocuments(readFileSync(join(k8s, 'base', 'kustomization.yaml'), 'utf8'))[0]!.toJS() as {
    resources: string[];
    configMapGenerator: Array<{ name: string; literals: string[] }>;
  };
  const files = base.resources.flatMap((file) => parseAllDocuments(readFileSync(join(k8s, 'base', file), 'utf8')).map((d) => d.toJS() as Manifest));
  const generated = base.configMapGenerator.map((g) => ({
    kind: 'ConfigMap',
    metadata: { name: g.name },
    data: Object.fromEntries(g.literals.map((l) => l.split('=', 2) as [string, string])),
  }));
  return [...files, ...generated];
}

const all = manifests();
const find = (kind: string, name: string) => all.find((m) => m.kind === kind && m.metadata.name === name);
const SERVICES = { tasks: 3001, meetings: 3002, clipboard: 3003 } as const;

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
      const data = Object.assign({}, ...all.filter((m) => m.kind === 'ConfigMap' && configMaps.includes(m.metadata.name)).map((m) => m.data));
      expect(data.SIGNUP).toBe('closed');
    });

    it('is scaled by a HorizontalPodAutoscaler on CPU, from at least 2 pods', () => {
      const hpa = find('HorizontalPodAutoscaler', svc);
      expect(hpa?.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: svc });
      expect(hpa!.spec.minReplicas).toBeGreaterThanOrEqual(kubectl ? 3 : 2);
      expect(hpa!.spec.maxReplicas).toBeGreaterThan(hpa!.spec.minReplicas);
      expect(hpa!.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } }]);
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
      expect(policy!.spec.ingress).toEqual([{ from: [{ podSelector: { matchLabels: { app: 'gateway' } } }], ports: [{ protocol: 'TCP', port }] }]);
      const egressPorts = policy!.spec.egress.flatMap((rule: { ports: Array<{ port: number }> }) => rule.ports.map((p) => p.port));
      expect(egressPorts.sort()).toEqual([53, 53, 5432, 6379].sort());
    });
  });

  it('denies every other connection in the namespace by default', () => {
    expect(find('NetworkPolicy', 'default-deny')?.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
  });

  it('lets the gateway reach each service on its port', () => {
    const egress = find('NetworkPolicy', 'gateway')!.spec.egress as Array<{ to: Array<{ podSelector?: { matchLabels: { app?: string } } }>; ports: Array<{ port: number }> }>;
    for (const [svc, port] of Object.entries(SERVICES)) {
      expect(egress).toContainEqual({ to: [{ podSelector: { matchLabels: { app: svc } } }], ports: [{ protocol: 'TCP', port }] });
    }
    expect(find('PodDisruptionBudget', 'gateway')).toBeDefined();
  });
});
