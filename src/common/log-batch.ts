import pino, { DestinationStream } from 'pino';

/** What `LineBatch` hands its chunks to: sonic-boom, as `pino.destination` makes it. */
export interface LineSink {
  /** Holds a chunk (sonic-boom writes by itself only once it holds `HELD` characters). */
  write(chunk: string): unknown;
  /** Writes what it holds, asynchronously. */
  flush(cb?: (error?: Error) => void): void;
  /** Writes what it holds now, waiting out a full pipe. */
  flushSync(): void;
}

/** Gathered lines are handed over once they reach this many characters. */
const CHUNK = 4096;
/**
 * What sonic-boom holds before it writes by itself (its `minLength`, which must stay under its
 * 16 KB `maxWrite`): below it, it writes only when `LineBatch` flushes, so a chunk handed over at
 * exit is written synchronously rather than by an asynchronous write the exit cuts short.
 */
const HELD = 16 * 1024 - 1;
/** How long a log line may wait in memory before it is handed over and written. */
export const LOG_FLUSH_MS = 200;

/**
 * Log lines gathered in memory and handed to the destination (sonic-boom, which writes them
 * asynchronously) as one chunk of at least `chunk` characters, and whatever is gathered at every
 * `flush` (every `LOG_FLUSH_MS`) and at exit.
 *
 * Not sonic-boom's own `minLength`: at every write it measures its whole pending buffer in bytes
 * (`Buffer.byteLength` of a string grown by `+=`, which V8 flattens first: a copy of up to
 * 16 KB), so each line paid a copy of every line before it: ~12 µs and kilobytes of garbage a
 * request (paired rounds, docs/performance.md). Here a line costs a push, and sonic-boom is
 * handed one string of 4 KB where it was handed forty lines.
 */
export class LineBatch implements DestinationStream {
  private lines: string[] = [];
  private length = 0;

  constructor(
    private readonly sink: LineSink,
    private readonly chunk = CHUNK,
  ) {}

  write(line: string): void {
    this.lines.push(line);
    this.length += line.length;
    if (this.length >= this.chunk) this.flush();
  }

  /** Hands what is gathered to the destination and has it written asynchronously. */
  flush(cb?: (error?: Error) => void): void {
    this.handOver();
    try {
      this.sink.flush(cb);
    } catch {
      // the destination has ended (the process is exiting): nothing is left to write to
    }
  }

  /**
   * Hands what is gathered over and has the destination write everything now (at exit): nothing
   * asynchronous is started, which the exit would cut short (a full pipe on standard output).
   */
  flushSync(): void {
    this.handOver();
    try {
      this.sink.flushSync();
    } catch {
      // the destination has ended (the process is exiting): nothing is left to write to
    }
  }

  private handOver(): void {
    if (this.lines.length === 0) return;
    const chunk = this.lines.length === 1 ? this.lines[0] : this.lines.join('');
    this.lines = [];
    this.length = 0;
    try {
      this.sink.write(chunk);
    } catch {
      // the destination has ended (the process is exiting): nothing is left to write to
    }
  }
}

let stdout: LineBatch | undefined;

/**
 * Standard output, batched (`LineBatch`) and written asynchronously by sonic-boom: one per process
 * (standard output is one file descriptor; every app of the process logs through it). A line
 * waits at most `LOG_FLUSH_MS` in memory; what is gathered is written synchronously when the
 * process exits (`process.exit`, the end of its event loop); a process killed with SIGKILL
 * loses at most the last `LOG_FLUSH_MS` of lines.
 */
export function batchedStdout(): DestinationStream {
  if (stdout) return stdout;
  // 'exit' comes after process.exit() and at the loop's end alike (tested for both).
  process.on('exit', () => stdout?.flushSync());
  const batch = new LineBatch(pino.destination({ dest: 1, sync: false, minLength: HELD }));
  setInterval(() => batch.flush(), LOG_FLUSH_MS).unref();
  return (stdout = batch);
}
