import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './nginx.js';

export const k8sTemplatePath = join(repoRoot, 'infra', 'k8s', 'base', 'gateway-template.yaml');

/**
 * The gateway template as a Kubernetes ConfigMap. kustomize loads files only from below the
 * kustomization, so infra/k8s carries this generated copy of infra/nginx/templates/
 * gateway.conf.template, of the main config infra/nginx/nginx.conf and of the entrypoint's
 * TRUSTED_PROXIES check; the gateway tests fail when they differ.
 */
export function renderGatewayConfigMap(): string {
  const indent = (file: string) =>
    readFileSync(join(repoRoot, 'infra', 'nginx', file), 'utf8').split('\n').map((line) => (line ? `    ${line}` : '')).join('\n').replace(/\n+$/, '');
  return [
    '# Generated from infra/nginx/templates/gateway.conf.template, infra/nginx/nginx.conf and',
    '# infra/nginx/entrypoint/15-trusted-proxies.sh by `node packages/devstack/dist/k8s-gateway.js`;',
    '# do not edit by hand.',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: gateway-template',
    'data:',
    '  gateway.conf.template: |',
    indent('templates/gateway.conf.template'),
    '  nginx.conf: |',
    indent('nginx.conf'),
    '  15-trusted-proxies.sh: |',
    indent('entrypoint/15-trusted-proxies.sh'),
    '',
  ].join('\n');
}

if (require.main === module) {
  writeFileSync(k8sTemplatePath, renderGatewayConfigMap());
  process.stdout.write(`wrote ${k8sTemplatePath}\n`);
}
