import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { removeDir, tempDir, type AnyDoc } from '../helpers/spawn_node.js';
import { startUp, type Up } from '../helpers/spawn_up.js';

// The console and the metrics of a real `docshard up` cluster (one for the whole file), driven
// through Debian's Chromium with playwright-core. Screenshots of each panel go to SCREENSHOTS.
const SCREENSHOTS = process.env.DOCSHARD_CONSOLE_SCREENSHOTS ?? path.join(tmpdir(), 'docshard-console-screenshots');
const CHROMIUM = '/usr/bin/chromium';
// The flags the machine's notes give for a closed network, and a fresh profile each run.
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

interface Sample {
  name: string;
  type: string;
  metrics: Array<{ value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }>;
}

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(await res.text()) as Sample[];
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const family = samples.find((s) => s.name === name);
  const m = family?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return m?.value === undefined ? undefined : Number(m.value);
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('console and metrics of a docshard up cluster', () => {
  const dir = tempDir();
  let up: Up;
  let client: MongoClient;
  let admin: Db;
  let browser: BrowserContext;
  let page: Page;

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    // Single processes: the checks below reach a shard by its config.shards host and its metrics
    // by its process's name; the console's view of sets is console_view_test's.
    up = await startUp(dir, 2, ['--enableTestCommands', '--replicas', '0']);
    client = new MongoClient(up.uri);
    admin = client.db('admin');
    await admin.command({ balancerStop: 1 });
    await admin.command({ enableSharding: 'app', primaryShard: 'shard0' });
    await admin.command({ shardCollection: 'app.events', key: { ts: 1 } });
    for (const middle of [500, 1000, 1500]) await admin.command({ split: 'app.events', middle: { ts: middle } });
    await client.db('app').collection('events').insertMany(Array.from({ length: 2000 }, (_, ts) => ({ ts, pad: 'x'.repeat(200) })));
    await admin.command({ moveChunk: 'app.events', find: { ts: 500 }, to: 'shard1', _waitForDelete: true });
    // A fresh profile in the test's own directory (playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(path.join(dir, 'chromium'), { executablePath: CHROMIUM, args: CHROMIUM_FLAGS, viewport: { width: 1280, height: 900 } });
    page = await browser.newPage();
    await page.goto(up.consoleUrl);
  });

  after(async () => {
    await browser?.close();
    await client?.close();
    if (up?.child.exitCode === null) {
      up.child.kill('SIGTERM');
      await up.exited;
    }
    removeDir(dir);
  });

  const shot = (panel: string) => page.locator(`#${panel}`).screenshot({ path: path.join(SCREENSHOTS, `${panel}.png`) });

  it('shows the shards and a collection\'s distribution as config.chunks has it', { timeout: 60_000 }, async () => {
    await page.waitForSelector('#topology [data-node="shard0"] .badge.up');
    await page.waitForSelector('#topology [data-node="shard1"] .badge.up');
    await page.waitForSelector('#topology [data-node="config"] .badge.up');
    await shot('topology');
    await shot('balancer');
    assert.equal(await page.textContent('#balancer [data-mode]'), 'off');
    const chunks = await client.db('config').collection<AnyDoc>('chunks').aggregate([{ $group: { _id: '$shard', n: { $sum: 1 } } }]).toArray();
    for (const { _id: shard, n } of chunks.filter((c) => c._id !== 'config')) {
      const text = await until(`${String(shard)}'s chunk count`, async () => (await page.$eval(`#collections [data-ns="app.events"] tr[data-shard="${String(shard)}"] [data-chunks]`, (e) => e.textContent).catch(() => undefined)));
      assert.equal(Number(text), n, `chunks of ${String(shard)}`);
    }
    assert.equal(await page.textContent('#collections [data-ns="app.events"] tr[data-shard="shard1"] [data-docs]'), '500');
    await page.waitForSelector('#shard-map [data-ns="app.events"] .strip > div');
    await shot('collections');
    await shot('shard-map');
  });

  it('shows a migration with its progress while it runs, then in the history once it commits', { timeout: 60_000 }, async () => {
    const shard0 = client.db('config').collection<AnyDoc>('shards');
    const donorHost = (await shard0.findOne({ _id: 'shard0' as never }))!.host as string;
    const donor = new MongoClient(`mongodb://${donorHost}/?directConnection=true`);
    try {
      await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'alwaysOn' });
      const moving = admin.command({ moveChunk: 'app.events', find: { ts: 1000 }, to: 'shard1' });
      await page.waitForSelector('#migrations .in-flight tr[data-migration]', { timeout: 20_000 });
      const progress = await until('progress', async () => (await page.textContent('#migrations .in-flight [data-progress]'))?.trim() || undefined);
      assert.match(progress, /^\d+%$/);
      await shot('migrations');
      await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'off' });
      await moving;
      await page.waitForSelector('#migrations .in-flight [data-none]', { timeout: 20_000 });
      await page.waitForSelector('#migrations .history tr[data-outcome="committed"]');
      await shot('migrations');
    } finally {
      await donor.close();
    }
  });

  it('serves /metrics on every role, whose chunk, document and byte gauges match config.chunks and the shards, and whose counters only grow', { timeout: 90_000 }, async () => {
    assert.deepEqual([...up.metricsUrls.keys()].sort(), ['config', 'router', 'shard0', 'shard1']);
    const first = new Map<string, Sample[]>();
    for (const [name, url] of up.metricsUrls) {
      const samples = await scrape(url);
      first.set(name, samples);
      assert.equal(value(samples, 'docshard_info', { role: name === 'config' ? 'config' : name === 'router' ? 'router' : 'shard' }), 1, name);
      for (const family of samples) {
        assert.match(family.name, /^docshard_/, `${name}: ${family.name}`);
        if (family.type === 'COUNTER') assert.match(family.name, /_total$/, `${name}: ${family.name}`);
      }
      assert.equal(samples.find((f) => f.name === 'docshard_command_duration_seconds')?.type, 'HISTOGRAM', name);
    }
    const chunks = await client.db('config').collection<AnyDoc>('chunks').aggregate([{ $match: { shard: { $ne: 'config' } } }, { $group: { _id: '$shard', n: { $sum: 1 } } }]).toArray();
    const configSamples = await scrape(up.metricsUrls.get('config')!);
    for (const { _id: shard, n } of chunks) assert.equal(value(configSamples, 'docshard_chunks', { collection: 'app.events', shard: String(shard) }), n, `chunks on ${String(shard)}`);
    const [distribution] = await admin.aggregate<AnyDoc>([{ $shardedDataDistribution: {} }, { $match: { ns: 'app.events' } }]).toArray();
    for (const owner of distribution!.shards as AnyDoc[]) {
      const samples = await scrape(up.metricsUrls.get(owner.shardName)!);
      const labels = { collection: 'app.events', shard: owner.shardName };
      assert.equal(value(samples, 'docshard_collection_documents', { ...labels, state: 'owned' }), owner.numOwnedDocuments, `owned documents on ${owner.shardName}`);
      assert.equal(value(samples, 'docshard_collection_documents', { ...labels, state: 'orphaned' }), owner.numOrphanedDocs, `orphans on ${owner.shardName}`);
      assert.equal(value(samples, 'docshard_collection_size_bytes', { ...labels, state: 'owned' }), owner.ownedSizeBytes, `owned bytes on ${owner.shardName}`);
    }
    const shard0 = await scrape(up.metricsUrls.get('shard0')!);
    assert.ok(value(shard0, 'docshard_migrations_committed_total')! >= 2, 'the two moves donated by shard0');

    // A balancer round held inside a migration (the donor hangs at step 3) shows as running.
    await client.db('config').collection('settings').updateOne({ _id: 'chunksize' as never }, { $set: { value: 1 } }, { upsert: true });
    await admin.command({ shardCollection: 'app.big', key: { k: 1 } });
    await client.db('app').collection('big').insertMany(Array.from({ length: 4000 }, (_, k) => ({ k, pad: 'z'.repeat(1000) })));
    const donorHost = String((await client.db('config').collection<AnyDoc>('shards').findOne({ _id: 'shard0' as never }))!.host);
    const donor = new MongoClient(`mongodb://${donorHost}/?directConnection=true`);
    try {
      await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'alwaysOn' });
      await admin.command({ balancerStart: 1 });
      await until('a balancer round to run', async () => value(await scrape(up.metricsUrls.get('config')!), 'docshard_balancer_round_running') === 1, 30_000);
      await donor.db('admin').command({ configureFailPoint: 'moveChunkHangAtStep3', mode: 'off' });
      await admin.command({ balancerStop: 1 });
      assert.equal(value(await scrape(up.metricsUrls.get('config')!), 'docshard_balancer_round_running'), 0);
    } finally {
      await donor.close();
    }
    await client.db('config').collection('settings').deleteOne({ _id: 'chunksize' as never });

    // Every counter of the first scrape is still there, and no smaller.
    for (const [name, before] of first) {
      const after = await scrape(up.metricsUrls.get(name)!);
      for (const family of before.filter((f) => f.type === 'COUNTER' || f.type === 'HISTOGRAM')) {
        for (const m of family.metrics) {
          const later = after.find((f) => f.name === family.name)?.metrics.find((x) => JSON.stringify(x.labels ?? {}) === JSON.stringify(m.labels ?? {}));
          // A histogram nothing was observed in (a process's GC kinds) has no count yet.
          const [was, is] = family.type === 'COUNTER' ? [Number(m.value), Number(later?.value)] : [Number(m.count ?? 0), Number(later?.count ?? 0)];
          assert.ok(is >= was, `${name} ${family.name}${JSON.stringify(m.labels ?? {})}: ${was} -> ${is}`);
        }
      }
    }
  });

  it('moves the throughput chart and shows the hot range of a monotonic insert load', { timeout: 60_000 }, async () => {
    const events = client.db('app').collection('events');
    let ts = 2000;
    let loading = true;
    const load = (async () => {
      while (loading) await events.insertOne({ ts: ts++, pad: 'y'.repeat(100) });
    })();
    try {
      await until('the throughput chart to move', async () => Number(await page.getAttribute('#throughput', 'data-ops-total')) > 0);
      // A few seconds of the load, so the charts show it rather than its first point.
      await page.waitForTimeout(3000);
      const hot = await until('the heat map', async () => {
        const map = await page.$('#heat .heatmap[data-ns="app.events"]');
        if (map === null) return undefined;
        const [row, rows] = [Number(await map.getAttribute('data-hot-row')), Number(await map.getAttribute('data-rows'))];
        return row === rows - 1 && rows > 1 ? await map.$eval('[data-hot]', (e) => e.textContent) : undefined;
      });
      assert.match(hot ?? '', /MaxKey/, 'the last chunk, where every new ts goes, is the hot one');
      await shot('throughput');
      await shot('heat');
    } finally {
      loading = false;
      await load;
    }
  });

  it('kills a slow operation from its button', { timeout: 60_000 }, async () => {
    await admin.command({ configureFailPoint: 'failCommand', mode: { times: 1 }, data: { failCommands: ['find'], blockConnection: true, blockTimeMS: 60_000, appName: 'slow-client' } });
    const slowClient = new MongoClient(up.uri, { appName: 'slow-client', retryReads: false });
    try {
      const started = Date.now();
      const slow = slowClient.db('app').collection('events').findOne({ ts: 7 }).then(() => undefined, (err: { code?: number }) => err);
      await page.waitForSelector('#operations button[data-kill]', { timeout: 20_000 });
      const opid = await page.getAttribute('#operations button[data-kill]', 'data-kill');
      await shot('operations');
      // The panel is drawn anew every second (the running time grows): a locator finds the button
      // again if it was replaced meanwhile.
      await page.locator('#operations button[data-kill]').click();
      const err = await slow;
      assert.equal(err?.code, 11601, 'the client is answered Interrupted');
      assert.ok(Date.now() - started < 20_000, 'long before the 60 s block ends');
      await page.waitForSelector(`#operations tr[data-opid="${opid}"]`, { state: 'detached', timeout: 10_000 });
    } finally {
      await slowClient.close();
    }
  });
});
