/**
 * Reads `read()` until `done` holds of what it gave, or `timeoutMs` has passed (reading every
 * `everyMs`); returns the last value read, for the test to assert on. For state that settles
 * off the request's path: a worker's log entry, a lock another request waits for, a row written
 * again after a reconnect.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 5000, everyMs = 50 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, everyMs));
    value = await read();
  }
  return value;
}
