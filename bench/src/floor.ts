import type { BaselineRoute } from './baseline.js';
import type { Scenario } from './types.js';

type MoreBaseline = NonNullable<Scenario['moreBaselines']>[number];

/**
 * Further baselines: the same bare statement (or, for a read, the statements the product ran for
 * it) served by a minimal Express 5 app (express.json(), one handler, res.json). Against the product it shows what the service adds to the framework;
 * against the bare baseline, what the framework itself costs: a floor no Express service reaches
 * below.
 *
 * Two rows: the floor reached directly, and the floor behind a gateway of its own, rendered from
 * the same template as the product's. The product is always measured through the gateway, whose
 * nginx and second hop share the machine's cores with everything else; only the second row asks
 * the floor to pay them too.
 */
export function expressFloors(baseline: Scenario['baseline']): MoreBaseline[] {
  const served = 'served by a minimal Express 5 app (express.json(), one handler, res.json)';
  const direct = floorRoute(baseline, served);
  return [
    direct,
    { ...direct, label: `${direct.label} behind the gateway`, does: `${direct.does}, through a gateway of its own (the product's nginx template)`, throughGateway: true },
  ];
}

function floorRoute(baseline: Scenario['baseline'], served: string): MoreBaseline {
  if (baseline && 'replay' in baseline) {
    return { label: 'Express 5 floor', route: { replayVia: 'express' }, does: `replays the statements the product ran for one such request, ${served}` };
  }
  if (!baseline) throw new Error('an Express floor repeats a given bare statement or the captured ones');
  const route: BaselineRoute = { ...baseline.route, via: 'express' };
  return { label: 'Express 5 floor', route, does: `${baseline.does}, ${served}` };
}
