// Live signals over real HTTP: each pool member's metrics page scraped as the picker does, and
// every way a page can fail — stale, slow, malformed, missing, unreachable, too large — reported as
// such, never read as an idle endpoint.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { MetricsScraper, SERVER_METRICS, type ScrapeOptions } from '../src/signals.js';
import { staticEndpoints } from '../src/pool-members.js';
import { ManualPool } from './helpers.js';
import { MetricsServer, eventually } from './metrics-server.js';

const servers: MetricsServer[] = [];
const scrapers: MetricsScraper[] = [];
after(async () => {
  await Promise.all(scrapers.map((s) => s.close()));
  await Promise.all(servers.map((s) => s.close()));
});

async function server(): Promise<MetricsServer> {
  const s = await new MetricsServer().start();
  servers.push(s);
  return s;
}

const OPTIONS: ScrapeOptions = {
  names: SERVER_METRICS.vllm,
  path: '/metrics',
  intervalMs: 20,
  timeoutMs: 300,
  jitter: 0.2,
  staleAfterMs: 400,
  concurrency: 4,
  maxBodyBytes: 64 * 1024,
};

function scrape(addresses: string[], options: Partial<ScrapeOptions> = {}): MetricsScraper {
  const s = new MetricsScraper(staticEndpoints(addresses), { ...OPTIONS, ...options }).start();
  scrapers.push(s);
  return s;
}

test('vLLM, SGLang and trtllm-serve pages are read by their own metric names; several series add up', async () => {
  const vllm = (await server()).vllm({ waiting: 3, running: 5, kv: 0.25, lora: { running: 'a,b', waiting: 'c', max: 4 } });
  const sglang = await server();
  sglang.page = 'sglang:num_queue_reqs{tp="0"} 2\nsglang:num_queue_reqs{tp="1"} 1\nsglang:num_running_reqs 7\nsglang:token_usage 0.5\n';
  const trt = await server();
  trt.page =
    '# TYPE trtllm_num_requests_waiting gauge\ntrtllm_num_requests_waiting 4\ntrtllm_num_requests_running 1\ntrtllm_kv_cache_utilization 0.75 1712345678000\n';
  const a = scrape([vllm.address]);
  const b = scrape([sglang.address], { names: SERVER_METRICS.sglang });
  const c = scrape([trt.address], { names: SERVER_METRICS.trtllm });
  const fresh = (s: MetricsScraper, address: string) => eventually(() => (s.signals(address).state === 'fresh' ? s.signals(address) : undefined), address);
  const va = await fresh(a, vllm.address);
  assert.deepEqual([va.waiting, va.running, va.kvCache, va.lora], [3, 5, 0.25, { running: ['a', 'b'], waiting: ['c'], max: 4 }]);
  const vb = await fresh(b, sglang.address);
  assert.deepEqual([vb.waiting, vb.running, vb.kvCache, vb.lora], [3, 7, 0.5, undefined]);
  const vc = await fresh(c, trt.address);
  assert.deepEqual([vc.waiting, vc.running, vc.kvCache], [4, 1, 0.75]);
});

test('a label selector picks one series of a labelled metric (Triton-style names)', async () => {
  const s = await server();
  s.page = [
    'nv_trt_llm_request_metrics{request_type="waiting"} 6',
    'nv_trt_llm_request_metrics{request_type="scheduled"} 2',
    'nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"} 0.4',
    'nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="used"} 400',
    '',
  ].join('\n');
  const names = {
    waiting: 'nv_trt_llm_request_metrics{request_type="waiting"}',
    running: 'nv_trt_llm_request_metrics{request_type="scheduled"}',
    kvCache: 'nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction"}',
  };
  const scraper = scrape([s.address], { names });
  const got = await eventually(() => (scraper.signals(s.address).state === 'fresh' ? scraper.signals(s.address) : undefined), 'fresh');
  assert.deepEqual([got.waiting, got.running, got.kvCache], [6, 2, 0.4]);
});

test('metrics on another port and path than the endpoint: --metrics-port / --metrics-path', async () => {
  const s = (await server()).vllm({ waiting: 1 });
  // The endpoint serves inference on port 8000 of the same IP; its metrics are on the test server's port.
  const scraper = scrape(['127.0.0.1:8000'], { port: s.port, path: '/custom/metrics' });
  const got = await eventually(() => (scraper.signals('127.0.0.1:8000').state === 'fresh' ? scraper.signals('127.0.0.1:8000') : undefined), 'fresh');
  assert.equal(got.waiting, 1);
  assert.deepEqual(s.paths.slice(0, 1), ['/custom/metrics']);
});

test('stale: an endpoint whose last good scrape is too old is stale, not idle, until a scrape succeeds again', async () => {
  const s = (await server()).vllm({ waiting: 2 });
  const scraper = scrape([s.address]);
  await eventually(() => (scraper.signals(s.address).state === 'fresh' ? true : undefined), 'fresh');
  // Scrapes now take longer than the staleness bound (but less than the timeout): the data ages out.
  s.delayMs = 250;
  const staleAfterMs = 100;
  const slowScraper = scrape([s.address], { staleAfterMs, timeoutMs: 1000, intervalMs: 20 });
  await eventually(() => (slowScraper.signals(s.address).state === 'fresh' ? true : undefined), 'fresh before stale');
  const stale = await eventually(() => (slowScraper.signals(s.address).state === 'stale' ? slowScraper.signals(s.address) : undefined), 'stale');
  assert.equal(stale.waiting, 2, 'the last values are kept for the record');
  assert.deepEqual(slowScraper.states(), { fresh: 0, stale: 1, unreachable: 0, malformed: 0, missing: 0, pending: 0 });
});

test('slow: a scrape past its timeout makes the endpoint unreachable, with the reason', async () => {
  const s = (await server()).vllm({});
  s.delayMs = 2000;
  const scraper = scrape([s.address], { timeoutMs: 100 });
  const got = await eventually(() => (scraper.signals(s.address).state === 'unreachable' ? scraper.signals(s.address) : undefined), 'unreachable');
  assert.match(got.error ?? '', /no complete answer within 100 ms/);
});

test('unreachable: nothing listening, or an HTTP error status', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const p = (probe.address() as { port: number }).port;
      probe.close(() => resolve(p));
    });
  });
  const down = `127.0.0.1:${port}`;
  const failing = await server();
  failing.status = 503;
  const scraper = scrape([down, failing.address]);
  const a = await eventually(() => (scraper.signals(down).state === 'unreachable' ? scraper.signals(down) : undefined), 'refused');
  assert.match(a.error ?? '', /ECONNREFUSED/);
  const b = await eventually(() => (scraper.signals(failing.address).state === 'unreachable' ? scraper.signals(failing.address) : undefined), '503');
  assert.equal(b.error, 'HTTP 503');
});

test('malformed: a page that is not the text format, a bad value, or a page past the size bound', async () => {
  const html = await server();
  html.page = '<html><body>502 Bad Gateway</body></html>\n';
  const badValue = await server();
  badValue.vllm({ waiting: 1 });
  badValue.page = badValue.page.replace('vllm:num_requests_waiting{model_name="m"} 1', 'vllm:num_requests_waiting{model_name="m"} many');
  const huge = (await server()).vllm({});
  huge.page += `# ${'x'.repeat(70 * 1024)}\n`;
  const scraper = scrape([html.address, badValue.address, huge.address]);
  const state = (a: string) => eventually(() => (scraper.signals(a).state === 'malformed' ? scraper.signals(a) : undefined), a);
  assert.match((await state(html.address)).error ?? '', /^line 1: not a comment and no metric name/);
  assert.match((await state(badValue.address)).error ?? '', /line \d+: the value of vllm:num_requests_waiting is not a number: "many"/);
  assert.match((await state(huge.address)).error ?? '', /larger than 65536 bytes/);
});

test('missing: a page without a metric the profile reads (another server kind, for instance)', async () => {
  const s = await server();
  s.page = 'sglang:num_queue_reqs 1\nsglang:num_running_reqs 1\nsglang:token_usage 0.1\n';
  const scraper = scrape([s.address]);
  const got = await eventually(() => (scraper.signals(s.address).state === 'missing' ? scraper.signals(s.address) : undefined), 'missing');
  assert.equal(got.error, 'no vllm:num_requests_waiting, vllm:num_requests_running, vllm:kv_cache_usage_perc on the page');
});

test('bounded: at most `concurrency` scrapes at once; endpoints that leave the pool are no longer scraped or kept', async () => {
  const slow = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const s = (await server()).vllm({});
      s.delayMs = 60;
      return s;
    }),
  );
  let peak = 0;
  const pool = new ManualPool();
  pool.load(slow.map((s) => s.address).join(','));
  const scraper = new MetricsScraper(pool, { ...OPTIONS, concurrency: 2, timeoutMs: 1000 }).start();
  scrapers.push(scraper);
  const deadline = Date.now() + 20_000;
  while (slow.some((s) => s.scrapes < 2) && Date.now() < deadline) {
    peak = Math.max(
      peak,
      slow.reduce((t, s) => t + s.active, 0),
    );
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.ok(
    slow.every((s) => s.scrapes >= 2),
    'every endpoint is scraped again and again',
  );
  assert.ok(peak <= 2, `at most 2 scrapes in flight, saw ${peak}`);
  pool.load((slow[0] as MetricsServer).address);
  await eventually(() => (scraper.states().pending + scraper.states().fresh === 1 ? true : undefined), 'one endpoint left');
  const counts = slow.map((s) => s.scrapes);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(
    slow.slice(1).map((s, i) => s.scrapes - (counts[i + 1] as number) <= 1),
    slow.slice(1).map(() => true),
    'endpoints that left are scraped no more (one scrape may have been in flight)',
  );
  assert.ok((slow[0] as MetricsServer).scrapes > (counts[0] as number), 'the remaining endpoint still is');
});
