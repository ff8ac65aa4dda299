import { SchedulerRegistry } from '@nestjs/schedule';
import { parseConfig } from '../../config/load-config';
import { BackgroundWork } from './background-work';

describe('BackgroundWork: the one ROLE switch for scheduled work', () => {
  const make = (role: string) => {
    const registry = new SchedulerRegistry();
    const { runsWorkers } = parseConfig({ ROLE: role });
    return { work: new BackgroundWork({ runsWorkers }, registry), registry };
  };
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  };

  it('on an api instance nothing is scheduled and nothing runs', async () => {
    const { work, registry } = make('api');
    let runs = 0;
    expect(work.enabled).toBe(false);
    expect(work.every('job', 5, () => void runs++)).toBe(false);
    await new Promise((r) => setTimeout(r, 30));
    expect(runs).toBe(0);
    expect(registry.getIntervals()).toEqual([]);
  });

  it.each(['worker', 'all'])(
    'on a %s instance a job runs on its interval, registered by name',
    async (role) => {
      const { work, registry } = make(role);
      let runs = 0;
      expect(work.every('deliver', 5, () => void runs++)).toBe(true);
      expect(registry.getIntervals()).toEqual(['deliver']);
      await until(() => runs >= 3);
      await work.onApplicationShutdown();
    },
  );

  it('a run under way is never started twice on the instance', async () => {
    const { work } = make('worker');
    let started = 0;
    let finish!: () => void;
    const job = () => {
      started++;
      return new Promise<void>((resolve) => (finish = resolve));
    };
    const first = work.runOnce('charge', job);
    const second = work.runOnce('charge', job);
    await until(() => finish !== undefined);
    expect(started).toBe(1);
    finish();
    await Promise.all([first, second]);
    await work.runOnce('charge', () => void started++);
    expect(started).toBe(2);
  });

  it('a run that fails (even at once, before any await) is logged and the schedule goes on', async () => {
    const { work } = make('worker');
    let runs = 0;
    work.every('flaky', 5, () => {
      runs++;
      if (runs === 1) throw new Error('boom');
    });
    await until(() => runs >= 3);
    await work.onApplicationShutdown();
  });

  it('shutdown stops the schedules and waits for the run under way; nothing starts after it', async () => {
    const { work, registry } = make('worker');
    let finished = false;
    let release!: () => void;
    work.every('long', 5, async () => {
      await new Promise<void>((resolve) => (release = resolve));
      finished = true;
    });
    await until(() => release !== undefined);
    const stopping = work.onApplicationShutdown();
    expect(registry.getIntervals()).toEqual([]);
    release();
    await stopping;
    expect(finished).toBe(true);
    let after = 0;
    await work.runOnce('late', () => void after++);
    expect(after).toBe(0);
  });

  it('a close stops the schedules at its first step: no run starts while the modules drain', async () => {
    const { work, registry } = make('worker');
    let runs = 0;
    work.every('sweep', 5, () => void runs++);
    await until(() => runs >= 1);
    work.onModuleDestroy();
    expect(registry.getIntervals()).toEqual([]);
    const seen = runs;
    await new Promise((resolve) => setTimeout(resolve, 30)); // six periods
    expect(runs).toBe(seen);
    await work.runOnce('sweep', () => void runs++);
    expect(runs).toBe(seen);
    await work.onApplicationShutdown();
  });
});
