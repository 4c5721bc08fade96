// The inspector page at capture scale (issue 14, acceptance 2), in Debian's headless chromium
// driven by playwright-core: for each capture named, opened through the page's file input as a
// user opens one, it measures
//  - first rows: from the file input's change to the first rows of the list drawn (reading
//    the file, indexing it in the worker, the first rows decoded), and the indexing alone;
//  - a row click: from the click to the frame's tree and bytes drawn, for rows across the
//    capture (median and worst);
//  - a filter keystroke: each keystroke of a display filter typed into the box, as the browser's
//    Event Timing API measures it (input delay, handlers and the next paint: what the user
//    waits for before the character shows), then how long the filter took to show its first
//    matches and to look at every frame;
//  - memory: the worker's WebAssembly memory (file, index, decoder) and the page's JavaScript
//    heap, against the file's size, and the renderer process's resident memory (which holds
//    the worker's JavaScript heap too, which the page cannot measure).
// A capture the page cannot hold must show an error naming the limit instead.
//
//   node wasm/test/page_bench.mjs CAPTURE...      (scripts/bench-page.sh makes the captures and logs)
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const require = createRequire(join(root, 'pcap-tools/cli/tests/chromium/package.json'));
const { chromium } = require('playwright-core');

const files = process.argv.slice(2).map((f) => resolve(f));
if (!files.length) {
  console.error('usage: node page_bench.mjs CAPTURE...');
  process.exit(2);
}
const { base, server } = await serve(root);
const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--enable-precise-memory-info'];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args });
const MB = (b) => (b / 1048576).toFixed(1);

// The largest resident set among chromium's renderer processes, bytes (one page is open).
function rendererRss() {
  let best = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmd.includes('--type=renderer')) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (rss) best = Math.max(best, Number(rss[1]) * 1024);
    } catch {
      // (A process that ended meanwhile.)
    }
  }
  return best;
}
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];

// Clicks frame `n`'s row (scrolled to it) and answers the ms until its tree is drawn.
async function clickRow(page, n) {
  await page.evaluate((n) => window.rocescope.showRow(n - 1), n);
  await page.waitForSelector(`#list-rows .row[data-number="${n}"]`);
  return page.evaluate(async (n) => {
    const row = document.querySelector(`#list-rows .row[data-number="${n}"] .c-info`);
    const t0 = performance.now();
    row.click();
    while (window.rocescope.frame?.info?.number !== n || !document.querySelector('#tree .tree-head')) {
      await new Promise((r) => setTimeout(r, 0));
    }
    await new Promise((r) => requestAnimationFrame(() => r()));
    return performance.now() - t0;
  }, n);
}

try {
  for (const file of files) {
    const size = statSync(file).size;
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}/`);
    await page.waitForFunction(() => document.body.dataset.ready === '1');
    await page.setInputFiles('#file', file);
    await page.waitForFunction(() => window.rocescope.timings.firstRows !== undefined || document.querySelector('#status.error'),
      null, { timeout: 600000, polling: 100 });
    const status = await page.textContent('#status');
    const t = await page.evaluate(() => window.rocescope.timings);
    const frames = await page.evaluate(() => window.rocescope.summary?.frames ?? 0);
    const line = [`${basename(file)}: ${MB(size)} MB, ${frames.toLocaleString('en')} frames`];
    if (t.firstRows === undefined) {
      line.push(`not opened: ${status.trim()}`);
      console.log(line.join('; '));
      await page.close();
      continue;
    }
    line.push(`first rows ${t.firstRows.toFixed(0)} ms (file read ${t.read.toFixed(0)} ms, indexed in ${t.open.toFixed(0)} ms)`);
    // A row clicked at once, while the analysers run in the worker (a slice at a time).
    const busy = await page.evaluate(() => window.rocescope.analysis === null);
    const early = await clickRow(page, Math.min(frames, 30));
    line.push(`a row click while the analysers run${busy ? '' : ' (they had finished)'} ${early.toFixed(0)} ms`);
    await page.waitForFunction(() => window.rocescope.analysis !== null, null, { timeout: 600000, polling: 200 });
    line.push(`analysed in ${(await page.evaluate(() => window.rocescope.timings.analysis)).toFixed(0)} ms`);

    // Memory once open.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    const mem = await page.evaluate(() => window.rocescope.memory());
    const total = mem.wasm + (mem.js ?? 0) + metrics.JSHeapUsedSize;
    // (A worker's JavaScript heap is not measurable from the page: the renderer process's
    // resident memory, which holds the page, the worker and the module, bounds all three.)
    const renderer = rendererRss();
    line.push(`memory ${MB(total)} MB = wasm ${MB(mem.wasm)} + page JS ${MB(metrics.JSHeapUsedSize)}${mem.js === null ? '' : ` + worker JS ${MB(mem.js)}`}` +
      ` (${(total / size).toFixed(2)}× the file); the renderer process's resident memory ${MB(renderer)} MB (${(renderer / size).toFixed(2)}×)`);

    // Row clicks across the capture.
    const clicks = [];
    for (const at of [0.001, 0.25, 0.5, 0.75, 0.999]) {
      const n = Math.max(1, Math.floor(frames * at));
      clicks.push(await clickRow(page, n));
    }
    line.push(`row click median ${median(clicks).toFixed(0)} ms, worst ${Math.max(...clicks).toFixed(0)} ms`);

    // A filter typed key by key: each keystroke's latency (Event Timing), then the filter.
    await page.evaluate(() => {
      window.__keys = [];
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) if (e.name === 'keydown' || e.name === 'keypress' || e.name === 'input') window.__keys.push(e.duration);
      }).observe({ type: 'event', durationThreshold: 16, buffered: false });
    });
    const filter = 'rocescope.aeth.kind == nak';
    await page.click('#filter');
    await page.keyboard.type(filter, { delay: 60 });
    await page.waitForFunction(() => ['valid', 'invalid'].includes(document.getElementById('filter-bar').className),
      null, { timeout: 600000, polling: 100 });
    const keys = await page.evaluate(() => window.__keys);
    const ft = await page.evaluate(() => window.rocescope.timings);
    const shown = await page.evaluate(() => window.rocescope.shown);
    line.push(`filter keystrokes: ${filter.length} typed, worst ${keys.length ? Math.max(...keys).toFixed(0) : '< 16'} ms` +
      ` (${keys.length} over 16 ms); '${filter}': first matches ${ft.filterFirst?.toFixed(0) ?? '-'} ms, all ${ft.filter.toFixed(0)} ms, ${shown.toLocaleString('en')} shown`);
    if (errors.length) line.push(`page errors: ${errors.join(' | ')}`);
    console.log(line.join('; '));
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
}
