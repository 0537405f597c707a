import type pg from 'pg';
import type { Service } from '@app/devstack';
import type { BaselineRoute } from './baseline.js';
import type { LoadRequest } from './load.js';

/** A baseline route made of the statements the product ran (captured), served `via` a framework. */
interface ReplayedRoute {
  replayVia: NonNullable<BaselineRoute['via']>;
}

/** One measured load: the product through the gateway, and its baseline route. */
export interface Scenario {
  name: string;
  /** The service measured (its RSS is sampled); `all` for a scenario that drives the three. */
  service: Service | 'all';
  request: LoadRequest;
  /** Requests sent once each, with their SQL captured for the EXPLAIN check (default: `request`). */
  samples?: LoadRequest[];
  /**
   * The baseline: `replay` runs the statements the product ran for one such request (captured
   * from the database log); a write gives its bare statement instead; null: no baseline (the
   * mixed scenario reports its own figures only).
   */
  baseline: { replay: true } | { route: BaselineRoute; does: string } | null;
  /**
   * Further baselines for the same product run, each its own row: e.g. the clipboard create
   * against both a bare INSERT and the product's own SQL function, so the service's overhead
   * and the feature's cost read apart.
   */
  moreBaselines?: Array<{
    label: string;
    route: BaselineRoute | ReplayedRoute;
    does: string;
    /** Reached through a gateway of its own (the product's nginx template), as the product is. */
    throughGateway?: boolean;
  }>;
}

export interface BenchContext {
  /** A superuser connection to the bench database. */
  client: pg.ClientBase;
  /** The bench database's URL, for a seed that writes on connections of its own. */
  databaseUrl: string;
  gateway: string;
  /** The service's own admin command (create-key etc.). */
  admin(service: Service, ...argv: string[]): Promise<Record<string, any>>;
  /** GET through the gateway, parsed. */
  getJson(path: string, headers: Record<string, string>): Promise<any>;
}

/** Something a run started and stops (a product of a scenario's own): see `running` in main.ts. */
export interface Stoppable {
  stop(): Promise<void>;
}
