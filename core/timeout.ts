/** A promise that rejects with `message` unless `work` settles within `ms`; the timer never outlives the race. */
export function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  // One promise and one timer; Promise.race and finally() made three more promises per call, on the request path.
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
