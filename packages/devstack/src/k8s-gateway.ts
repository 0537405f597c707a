import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './root.js';
import { generatedHeader } from './generate/render.js';

export const k8sTemplatePath = join(repoRoot, 'infra', 'k8s', 'base', 'gateway-template.yaml');

/**
 * The gateway template as a Kubernetes ConfigMap. kustomize loads files only from below the
 * kustomization, so infra/k8s carries this generated copy of infra/nginx/templates/
 * gateway.conf.template (`template`, the file itself unless given), of the main config
 * infra/nginx/nginx.conf and of the entrypoint's TRUSTED_PROXIES check; `npm run generate` writes
 * it, and its check fails when they differ.
 */
export function renderGatewayConfigMap(
  template = readFileSync(join(repoRoot, 'infra', 'nginx', 'templates', 'gateway.conf.template'), 'utf8'),
): string {
  const indent = (text: string) =>
    text
      .split('\n')
      .map((line) => (line ? `    ${line}` : ''))
      .join('\n')
      .replace(/\n+$/, '');
  return [
    generatedHeader(
      k8sTemplatePath,
      'infra/nginx/templates/gateway.conf.template, infra/nginx/nginx.conf and infra/nginx/entrypoint/15-trusted-proxies.sh',
    ),
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: gateway-template',
    'data:',
    '  gateway.conf.template: |',
    indent(template),
    '  nginx.conf: |',
    indent(readFileSync(join(repoRoot, 'infra', 'nginx', 'nginx.conf'), 'utf8')),
    '  15-trusted-proxies.sh: |',
    indent(readFileSync(join(repoRoot, 'infra', 'nginx', 'entrypoint', '15-trusted-proxies.sh'), 'utf8')),
    '',
  ].join('\n');
}
