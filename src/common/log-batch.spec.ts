import { LineBatch, LineSink } from './log-batch';

class RecordingSink implements LineSink {
  readonly chunks: string[] = [];
  syncFlushes = 0;

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }

  flushSync(): void {
    this.syncFlushes++;
  }
}

describe('LineBatch', () => {
  it('hands the lines over in order, as one chunk, once they reach its size', () => {
    const sink = new RecordingSink();
    const batch = new LineBatch(sink, 10);
    batch.write('abc\n');
    batch.write('def\n');
    expect(sink.chunks).toEqual([]);
    batch.write('gh\n');
    expect(sink.chunks).toEqual(['abc\ndef\ngh\n']);
    batch.write('ij\n');
    expect(sink.chunks).toEqual(['abc\ndef\ngh\n']);
  });

  it('flush hands over what is gathered, and flushSync has the destination write it all', () => {
    const sink = new RecordingSink();
    const batch = new LineBatch(sink, 4096);
    batch.write('one\n');
    batch.flush();
    expect(sink.chunks).toEqual(['one\n']);
    batch.flush();
    expect(sink.chunks).toEqual(['one\n']);
    batch.write('two\n');
    batch.flushSync();
    expect(sink.chunks).toEqual(['one\n', 'two\n']);
    expect(sink.syncFlushes).toBe(1);
  });

  it('loses nothing when the destination has ended (a flush at exit after the end)', () => {
    const batch = new LineBatch({
      write: () => {
        throw new Error('SonicBoom destroyed');
      },
      flushSync: () => {
        throw new Error('SonicBoom destroyed');
      },
    });
    batch.write('late\n');
    expect(() => batch.flush()).not.toThrow();
    expect(() => batch.flushSync()).not.toThrow();
  });
});
