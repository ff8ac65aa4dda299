import { LineBatch, LineSink } from './log-batch';

class RecordingSink implements LineSink {
  /** What happened, in order: `write:<chunk>`, `flush`, `flushSync`. */
  readonly calls: string[] = [];

  write(chunk: string): boolean {
    this.calls.push(`write:${chunk}`);
    return true;
  }

  flush(cb?: (error?: Error) => void): void {
    this.calls.push('flush');
    cb?.();
  }

  flushSync(): void {
    this.calls.push('flushSync');
  }
}

describe('LineBatch', () => {
  it('hands the lines over in order, as one chunk written at once, when they reach its size', () => {
    const sink = new RecordingSink();
    const batch = new LineBatch(sink, 10);
    batch.write('abc\n');
    batch.write('def\n');
    expect(sink.calls).toEqual([]);
    batch.write('gh\n');
    expect(sink.calls).toEqual(['write:abc\ndef\ngh\n', 'flush']);
    batch.write('ij\n');
    expect(sink.calls).toEqual(['write:abc\ndef\ngh\n', 'flush']);
  });

  it('flush hands over what is gathered and has it written, telling its caller when', () => {
    const sink = new RecordingSink();
    const batch = new LineBatch(sink, 4096);
    batch.write('one\n');
    const done = jest.fn();
    batch.flush(done);
    expect(sink.calls).toEqual(['write:one\n', 'flush']);
    expect(done).toHaveBeenCalledTimes(1);
    batch.flush();
    expect(sink.calls).toEqual(['write:one\n', 'flush', 'flush']);
  });

  it('flushSync (at exit) hands over and writes synchronously, starting nothing asynchronous', () => {
    const sink = new RecordingSink();
    const batch = new LineBatch(sink, 4096);
    batch.write('two\n');
    batch.flushSync();
    expect(sink.calls).toEqual(['write:two\n', 'flushSync']);
  });

  it('throws nothing into the caller when the destination has ended (a flush at exit after the end)', () => {
    const ended = () => {
      throw new Error('SonicBoom destroyed');
    };
    const batch = new LineBatch({ write: ended, flush: ended, flushSync: ended });
    batch.write('late\n');
    expect(() => batch.flush()).not.toThrow();
    batch.write('later\n');
    expect(() => batch.flushSync()).not.toThrow();
  });
});
