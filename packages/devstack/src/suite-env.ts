/** High request limits for a shared suite's service: only the rules under test may answer 429. */
export const UNLIMITED = {
  RATE_LIMIT_PER_MINUTE: '100000',
  RATE_LIMIT_READS_PER_MINUTE: '100000',
  RATE_LIMIT_WRITES_PER_MINUTE: '100000',
};

/** A webhook suite's service: unlimited, loopback receivers allowed, retries from 200 ms. */
export const WEBHOOK_SUITE_ENV = { ...UNLIMITED, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' };
