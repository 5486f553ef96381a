// The stage runner against a real database, on the test resource of ./helpers.ts: each stage's
// output is stored before the next starts, so an attempt interrupted after stage 2 resumes at
// stage 3 without running stages 1 and 2 again; progress comes from the weights and never goes
// backwards, across attempts too; the runner's record of the stages' runs (state `runs`) says which
// attempts started each stage and when it finished, so a finished stage is seen to have run once.
import { eq } from 'drizzle-orm';
import t from 'tap';
import type { AppContext } from '../../src/context.ts';
import { facelessVideos } from '../../src/db/schema/index.ts';
import type { JobTools } from '../../src/jobs/define-job.ts';
import { runStages, type StageRun, type Stages } from '../../src/kernel/stages.ts';
import { startTestApp } from '../helpers/app.ts';
import { newThing, thing } from './helpers.ts';

const app = await startTestApp(t);
const ctx: AppContext = app.service.ctx;
const db = ctx.db;

type Row = typeof facelessVideos.$inferSelect;
interface Outputs {
  one: number;
  two: string;
  three: number[];
  four: { total: number };
}

const row = async (id: number) => (await db.select().from(facelessVideos).where(eq(facelessVideos.videoId, id)))[0];

t.test('an attempt interrupted after stage 2 resumes at stage 3, and progress never goes backwards', async (t) => {
  const { id } = await newThing(app);
  const calls = { one: 0, two: 0, three: 0, four: 0 };
  let killed = true;
  /** Progress as the database had it whenever a stage ran (the test's tools write nothing: only the runner's marks are written). */
  const seen: [string | null, number][] = [];
  const look = async () => {
    const r = await row(id);
    seen.push([r.stage, r.progress]);
  };
  const stages: Stages<Row, Outputs> = [
    { name: 'one', weight: 10, run: async () => (calls.one++, look().then(() => 1)) },
    {
      name: 'two',
      weight: 20,
      run: async (s, done) => {
        calls.two++;
        s.report(0.5);
        await look();
        return `two after ${done.one}`;
      },
    },
    {
      name: 'three',
      weight: 30,
      run: async (s, done) => {
        calls.three++;
        await look();
        if (killed) throw new Error('worker killed');
        return [done.one, done.two.length];
      },
    },
    { name: 'four', weight: 39, run: async (_s, done) => (calls.four++, await look(), { total: done.three[0] + done.three[1] }) },
  ];
  const reports: [string, number][] = [];
  const tools = (): JobTools => ({
    signal: new AbortController().signal,
    progress: (stage, percent) => void reports.push([stage, percent]),
    annotate() {},
  });

  // Attempt 1: stopped in stage 3.
  await t.rejects(runStages(ctx, thing, (await thing.start(ctx, id))!, stages, tools()), /worker killed/);
  t.same(calls, { one: 1, two: 1, three: 1, four: 0 });
  const mid = await row(id);
  t.match(mid, { status: 'generating', stage: 'three', progress: 30 }, 'the stage it was in, from its start');
  const stored = mid.artifacts as Record<string, unknown>;
  t.same(Object.keys(stored).sort(), ['one', 'runs', 'timings', 'two'], 'the outputs of stages 1 and 2 are stored, not 3');
  const midRuns = stored.runs as Record<string, StageRun>;
  t.same(Object.keys(midRuns), ['one', 'two', 'three'], 'the stages it started');
  t.match(midRuns, {
    one: { attempts: [1], startedAt: String, finishedAt: String },
    two: { attempts: [1], startedAt: String, finishedAt: String },
    three: { attempts: [1], startedAt: String },
  });
  t.notOk('finishedAt' in midRuns.three, 'stage 3 started in attempt 1 and did not finish');
  t.ok(Date.parse(midRuns.one.startedAt) <= Date.parse(midRuns.one.finishedAt!), 'a stage starts before it finishes');
  t.ok(Date.parse(midRuns.one.finishedAt!) <= Date.parse(midRuns.two.startedAt), 'and before the next starts');
  t.match(stored, { one: 1, two: 'two after 1', timings: { one: Number, two: Number } });
  t.same(
    reports,
    [
      ['one', 0],
      ['one', 10],
      ['two', 10],
      ['two', 20],
      ['two', 30],
      ['three', 30],
    ],
    'each stage reported from its weights: its start, its way through, its end',
  );

  // Attempt 2: resumes at stage 3 with the stored outputs.
  killed = false;
  reports.length = 0;
  const resumed = await runStages(ctx, thing, (await thing.start(ctx, id))!, stages, tools());
  t.same(calls, { one: 1, two: 1, three: 2, four: 1 }, 'stages 1 and 2 did not run again');
  t.same(resumed.outputs, { one: 1, two: 'two after 1', three: [1, 11], four: { total: 12 } });
  t.same(Object.keys(resumed.timings).sort(), ['four', 'one', 'three', 'two'], 'the timings of both attempts');
  t.same(
    reports,
    [
      ['three', 30],
      ['three', 60],
      ['four', 60],
      ['four', 99],
    ],
    'only the stages it ran',
  );
  const end = await row(id);
  t.match(end, { status: 'generating', stage: 'four', progress: 99, attempts: 2 });
  t.match(end.artifacts, { one: 1, two: 'two after 1', three: [1, 11], four: { total: 12 } });
  const endRuns = (end.artifacts as { runs: Record<string, StageRun> }).runs;
  t.same(endRuns.one, midRuns.one, 'stage 1: the record of attempt 1, unchanged');
  t.same(endRuns.two, midRuns.two, 'stage 2: the record of attempt 1, unchanged');
  t.match(endRuns.three, { attempts: [1, 2], startedAt: String, finishedAt: String }, 'stage 3: started twice, finished in attempt 2');
  t.ok(Date.parse(endRuns.three.startedAt) > Date.parse(midRuns.three.startedAt), 'its start is the second one');
  t.match(endRuns.four, { attempts: [2], finishedAt: String });

  const percents = seen.map(([, p]) => p);
  t.same(
    percents,
    [...percents].sort((a, b) => a - b),
    `progress never went back (${JSON.stringify(seen)})`,
  );
  t.same(
    seen.map(([s]) => s),
    ['one', 'two', 'three', 'three', 'four'],
    'each stage was visible while it ran',
  );

  // A third attempt finds every stage done: it runs nothing and reports nothing.
  reports.length = 0;
  const again = await runStages(ctx, thing, (await thing.start(ctx, id))!, stages, tools());
  t.same(calls, { one: 1, two: 1, three: 2, four: 1 });
  t.same(again.outputs, resumed.outputs);
  t.same(reports, []);
  t.same((await row(id)).artifacts, end.artifacts, 'and records no run');
});

t.test('a stage that stores its own output is read back through `stored`, not the state column', async (t) => {
  const { id } = await newThing(app);
  let runs = 0;
  const stages: Stages<Row, { title: string; after: number }> = [
    {
      name: 'title',
      weight: 50,
      stored: (_ctx, r) => (r.title.startsWith('Titled: ') ? r.title : undefined),
      run: async () => {
        runs++;
        await db.update(facelessVideos).set({ title: 'Titled: yes' }).where(eq(facelessVideos.videoId, id));
        return 'Titled: yes';
      },
    },
    {
      name: 'after',
      weight: 50,
      run: async () => {
        throw new Error('stopped');
      },
    },
  ];
  const tools: JobTools = { signal: new AbortController().signal, progress() {}, annotate() {} };
  await t.rejects(runStages(ctx, thing, (await thing.start(ctx, id))!, stages, tools));
  const first = (await row(id)).artifacts as Record<string, any>;
  t.notOk('title' in first, 'its output is not in the state column');
  t.match(first.runs, { title: { attempts: [1], finishedAt: String }, after: { attempts: [1] } }, 'its runs are recorded there');
  await t.rejects(runStages(ctx, thing, (await thing.start(ctx, id))!, stages, tools));
  t.equal(runs, 1, 'the stored stage did not run again');
  const second = (await row(id)).artifacts as Record<string, any>;
  t.same(second.runs.title, first.runs.title, 'nor was it recorded as run');
  t.same(second.runs.after.attempts, [1, 2]);
});

t.test('an aborted attempt starts no further stage', async (t) => {
  const { id } = await newThing(app);
  const abort = new AbortController();
  const ran: string[] = [];
  const stages: Stages<Row, { a: number; b: number }> = [
    { name: 'a', weight: 50, run: async () => (ran.push('a'), abort.abort(new Error('stopping')), 1) },
    { name: 'b', weight: 49, run: async () => (ran.push('b'), 2) },
  ];
  await t.rejects(
    runStages(ctx, thing, (await thing.start(ctx, id))!, stages, { signal: abort.signal, progress() {}, annotate() {} }),
    /stopping/,
  );
  t.same(ran, ['a']);
  t.match((await row(id)).artifacts, { a: 1 }, 'the finished stage is stored');
});
