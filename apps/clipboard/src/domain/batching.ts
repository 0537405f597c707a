interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Runs work per key one batch at a time: an input whose key has a batch in flight waits, and
 * everything that waited goes together (in arrival order, up to `maxBatch`) once it is done.
 *
 * `run` gets the inputs of one batch and returns one output per input, in the same order. A
 * batch succeeds or fails as a whole: when `run` throws, every input of that batch gets the error.
 */
export function batchedPerKey<I, O>(
  run: (key: string, inputs: I[]) => Promise<O[]>,
  maxBatch: number,
): (key: string, input: I) => Promise<O> {
  /** Keys with a batch in flight, and what waits for the next one. */
  const waiting = new Map<string, Array<Waiting<I, O>>>();

  async function drain(key: string, first: Waiting<I, O>): Promise<void> {
    let batch = [first];
    while (batch.length > 0) {
      try {
        const outputs = await run(
          key,
          batch.map((w) => w.input),
        );
        // One answer per input, or none: a request must never get another's output or nothing.
        if (outputs.length !== batch.length)
          throw new Error(`a batch of ${batch.length} returned ${outputs.length} outputs`);
        batch.forEach((w, i) => w.resolve(outputs[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
      batch = waiting.get(key)!.splice(0, maxBatch);
    }
    waiting.delete(key);
  }

  return (key, input) =>
    new Promise<O>((resolve, reject) => {
      const queue = waiting.get(key);
      if (queue) {
        queue.push({ input, resolve, reject });
        return;
      }
      waiting.set(key, []);
      void drain(key, { input, resolve, reject });
    });
}
