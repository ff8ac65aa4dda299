/**
 * A response recorded earlier and sent again as it was (an idempotent replay): thrown by the
 * handler's wrapper, written by the exception filter with the stored status and body bytes, so
 * a replayed error keeps its original request id and a replayed success its original body.
 */
export class StoredResponse extends Error {
  constructor(
    readonly status: number,
    /** The JSON body exactly as first sent. */
    readonly body: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(`Stored response ${status}`);
    this.name = 'StoredResponse';
  }
}
