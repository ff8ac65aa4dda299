/** Rejects with `message` when `promise` has not settled within `ms` (the timer is cleared either way). */
export function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  message = `no answer within ${ms} ms`,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
