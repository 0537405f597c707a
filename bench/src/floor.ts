import type { BaselineRoute } from './baseline.js';
import type { Scenario } from './types.js';

/**
 * A further baseline: the same bare statement (or, for a read, the statements the product ran for
 * it) served by a minimal Express 5 app (express.json(), one handler, res.json). Against the product it shows what the service adds to the framework;
 * against the bare baseline, what the framework itself costs: a floor no Express service reaches
 * below.
 */
export function expressFloor(baseline: Scenario['baseline']): NonNullable<Scenario['moreBaselines']>[number] {
  const served = 'served by a minimal Express 5 app (express.json(), one handler, res.json)';
  if (baseline && 'replay' in baseline) {
    return { label: 'Express 5 floor', route: { replayVia: 'express' }, does: `replays the statements the product ran for one such request, ${served}` };
  }
  if (!baseline) throw new Error('an Express floor repeats a given bare statement or the captured ones');
  const route: BaselineRoute = { ...baseline.route, via: 'express' };
  return { label: 'Express 5 floor', route, does: `${baseline.does}, ${served}` };
}
