import type { BaselineRoute } from './baseline.js';
import type { Scenario } from './types.js';

type MoreBaseline = NonNullable<Scenario['moreBaselines']>[number];

const SERVED = 'served by a minimal Express 5 app (express.json(), one handler, res.json)';

/**
 * Further baselines: the same bare statement (or, for a read, the statements the product ran for
 * it) served by a minimal Express 5 app (express.json(), one handler, res.json). Against the product it shows what the service adds to the framework;
 * against the bare baseline, what the framework itself costs: a floor no Express service reaches
 * below.
 *
 * Three rows: the floor reached directly; the floor behind a gateway of its own, rendered from
 * the same template as the product's (the product is always measured through the gateway, whose
 * nginx and second hop share the machine's cores with everything else; only this row and the next
 * ask the floor to pay them too); and that floor served as the services are ({@link onPrototypes}).
 */
export function expressFloors(baseline: Scenario['baseline']): MoreBaseline[] {
  const direct = floorRoute(baseline);
  const behind = {
    ...direct,
    label: `${direct.label} behind the gateway`,
    does: `${direct.does}, through a gateway of its own (the product's nginx template)`,
    throughGateway: true,
  };
  return [direct, behind, onPrototypes(behind)];
}

/**
 * A floor served as the product's services are: its requests and responses made on the app's own
 * prototypes (`onAppPrototypes`), where Express's own server has Express move each onto them.
 * On Node 20 that move gave every request hidden classes of its own and cost the framework about
 * half its CPU; this row is the floor without that cost.
 */
function onPrototypes(floor: MoreBaseline): MoreBaseline {
  const route =
    'replayVia' in floor.route
      ? { replayVia: 'express-on-prototypes' as const }
      : { ...floor.route, via: 'express-on-prototypes' as const };
  return {
    ...floor,
    label: floor.label.replace('Express 5 floor', 'Express 5 floor on its prototypes'),
    route,
    does: `${floor.does}; its requests and responses made on the app's own prototypes, as the services serve theirs`,
  };
}

/**
 * The product's own SQL served by the same minimal Express 5 app, on its prototypes (as the
 * services are served), behind a gateway of its own:
 * what a service on Express that ran the spec's statements and nothing else (no authentication,
 * validation, rate limit, security headers or metrics) could reach on this machine. Against the
 * floor, it is the ceiling of the ratio the product can reach; against the product, what the
 * service's own work costs.
 */
export function expressCeiling(sameSql: { route: BaselineRoute; does: string }, serving: string): MoreBaseline {
  const route: BaselineRoute = { ...sameSql.route, via: 'express-on-prototypes' };
  return {
    label: `Express 5 serving ${serving} behind the gateway`,
    route,
    does: `${sameSql.does}, ${SERVED} as the services serve theirs (on the app's own prototypes), through a gateway of its own (the product's nginx template)`,
    throughGateway: true,
  };
}

function floorRoute(baseline: Scenario['baseline']): MoreBaseline {
  if (baseline && 'replay' in baseline) {
    return {
      label: 'Express 5 floor',
      route: { replayVia: 'express' },
      does: `replays the statements the product ran for one such request, ${SERVED}`,
    };
  }
  if (!baseline) throw new Error('an Express floor repeats a given bare statement or the captured ones');
  const route: BaselineRoute = { ...baseline.route, via: 'express' };
  return { label: 'Express 5 floor', route, does: `${baseline.does}, ${SERVED}` };
}
