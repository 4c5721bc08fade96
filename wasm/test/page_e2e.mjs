// The inspector page in a real browser (issue 14, acceptance 1 and 3): Debian's headless
// chromium, driven by playwright-core, loads wasm/www over http (a server in this script),
// opens fixtures of every profile and checks, as a user would see them:
//  - the frame count, and for chosen frames (first, last, middle, the first warned and the
//    first of each profile), clicked in the list, every field the tree shows (name and value)
//    against `rocescope decode --format json` (the binary is run);
//  - a clicked field highlights exactly its bytes in the hex view, and a clicked byte selects
//    the smallest field covering it;
//  - a display filter typed in the filter box shows the frames `rocescope decode -Y` prints, a
//    bad one says why, and a flow clicked in the flow table shows that flow;
//  - garbage, cut and empty files give a readable error and the frames before the damage.
// Prints one JSON line of what it checked; exits non-zero with the first failure.
//
//   node wasm/test/page_e2e.mjs ROCESCOPE_BIN [--screenshots DIR]
//
// playwright-core is the one pinned in pcap-tools/cli/tests/chromium (npm ci there; .ci/run
// does it). With --screenshots, PNGs of the page are written to DIR (docs/ keeps them; CI
// does not take them).
import { createRequire } from 'node:module';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { serve } from './serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const require = createRequire(join(root, 'pcap-tools/cli/tests/chromium/package.json'));
const { chromium } = require('playwright-core');

const [bin, ...rest] = process.argv.slice(2);
const shotsAt = rest.indexOf('--screenshots');
const shots = shotsAt >= 0 ? resolve(rest[shotsAt + 1]) : null;
if (!bin) {
  console.error('usage: node page_e2e.mjs ROCESCOPE_BIN [--screenshots DIR]');
  process.exit(2);
}

// ---- the page at /, the fixtures at /fixtures/, made files at /made/ (serve.mjs) -------------

const made = new Map(); // name -> bytes
const { base, server } = await serve(root, made);

// ---- what the command line says ------------------------------------------------------------

function cliJson(file) {
  return JSON.parse(execFileSync(bin, ['decode', '--format', 'json', file], { maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'ignore'] }).toString());
}
function cliFilter(file, filter) {
  const out = execFileSync(bin, ['decode', '-Y', filter, '-e', 'frame.number', file]).toString();
  return out.split('\n').filter(Boolean).map(Number);
}
const OWN_KEYS = new Set(['frame', 'time_ns', 'time_relative', 'time_delta', 'len', 'cap_len', 'interface', 'src', 'dst']);
const text = (v) => (typeof v === 'boolean' ? (v ? '1' : '0') : String(v));

// name -> [values] of a CLI frame, registry fields only (the capture columns are the page's
// head line).
function cliFields(frame, registry) {
  const out = {};
  for (const [k, v] of Object.entries(frame)) {
    if (OWN_KEYS.has(k) || registry[k] !== 'field') continue;
    out[k] = Array.isArray(v) ? v.map(text) : [text(v)];
  }
  return out;
}

// ---- the browser ---------------------------------------------------------------------------

const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args });
const checked = { fixtures: 0, frames: 0, values: 0, highlights: 0, filters: 0, errors: 0, analysis: 0 };
let page;
const pageErrors = [];

async function openPage(query) {
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  await page.goto(`${base}/?${query}`);
  await page.waitForFunction(() => document.body.dataset.ready === '1' || document.querySelector('#status.error'), null, { timeout: 60000 });
}

// Clicks frame `n` in the list (scrolled to it as a user scrolls) and waits for its tree.
async function clickFrame(n) {
  const row = await page.evaluate((n) => window.rocescope.shown && n, n);
  assert.ok(row, `frame ${n}`);
  await page.evaluate((n) => window.rocescope.showRow(n - 1), n);
  const sel = `#list-rows .row[data-number="${n}"]`;
  await page.waitForSelector(sel, { timeout: 10000 });
  await page.click(`${sel} .c-info`);
  await page.waitForFunction((n) => window.rocescope.frame?.info?.number === n
    && document.querySelector('#tree .tree-head strong')?.textContent === `Frame ${n}`, n);
}

async function treeFields() {
  return page.$$eval('#tree .field[data-kind="field"]', (rows) => rows.map((r) => [r.dataset.name, r.querySelector('.fvalue').textContent]));
}

try {
  const fixtures = ['std-mix.pcapng', 'ext-mix.pcapng', 'ib-native.pcapng', 'synth-gbn-loss.pcapng', 'synth-dcp-loss.pcapng',
    'synth-sdr-loss.pcapng', 'synth-flor-loss.pcapng', 'synth-netrt-loss.pcapng', 'synth-erd-loss.pcapng'];
  for (const name of fixtures) {
    const file = join(root, 'fixtures', name);
    const want = cliJson(file);
    await openPage(`capture=/fixtures/${name}`);
    const registry = await page.evaluate(() => Object.fromEntries([...window.rocescope.registry].map(([k, d]) => [k, d.type === 'meta' ? 'meta' : 'field'])));
    const summary = await page.evaluate(() => window.rocescope.summary);
    assert.equal(summary.error, null, `${name}: ${JSON.stringify(summary.error)}`);
    assert.equal(summary.frames, want.length, `${name}: frames`);
    // Only visible rows are in the DOM.
    const inDom = await page.$$eval('#list-rows .row', (r) => r.length);
    assert.ok(inDom < 80 && (inDom >= Math.min(want.length, 20)), `${name}: ${inDom} rows in the DOM for ${want.length} frames`);
    const pick = new Set([1, want.length, Math.ceil(want.length / 2)]);
    const firstWarned = want.find((f) => f['rocescope.warning']);
    if (firstWarned) pick.add(firstWarned.frame);
    for (const p of ['std', 'dcp', 'sdr', 'flor', 'netrt', 'erd']) {
      const f = want.find((x) => x['rocescope.profile'] === p);
      if (f) pick.add(f.frame);
    }
    for (const n of pick) {
      await clickFrame(n);
      const got = {};
      for (const [k, v] of await treeFields()) (got[k] ??= []).push(v);
      const expect = cliFields(want[n - 1], registry);
      assert.deepEqual(got, expect, `${name}: frame ${n}'s fields`);
      // Every byte of the hex view belongs to a row of the tree (a layer's or the registry's).
      const orphans = await page.evaluate(() => {
        const all = window.rocescope.frame.all;
        const rows = new Set([...document.querySelectorAll('#tree .field')].map((r) => Number(r.dataset.index)));
        const out = [];
        for (const b of document.querySelectorAll('#hex .hexbytes .b')) {
          const i = Number(b.dataset.i);
          if (!all.some((f, k) => f.start <= i && i < f.end && rows.has(k))) out.push(i);
        }
        return out;
      });
      assert.deepEqual(orphans, [], `${name}: frame ${n}: bytes of no field`);
      checked.frames++;
      checked.values += Object.values(expect).reduce((a, v) => a + v.length, 0);
    }
    // The hex view: a field with bytes clicked highlights them, and only them.
    const fields = await page.evaluate(() => window.rocescope.frame.all);
    const withBytes = fields.map((f, i) => [f, i]).filter(([f]) => f.end > f.start);
    for (const [f, i] of [withBytes[0], withBytes[withBytes.length - 1]].filter(Boolean)) {
      await page.click(`#tree .field[data-index="${i}"]`);
      const lit = await page.$$eval('#hex .hexbytes .b.hl', (b) => b.map((x) => Number(x.dataset.i)));
      assert.deepEqual(lit, Array.from({ length: f.end - f.start }, (_, k) => f.start + k), `${name}: ${f.name}'s bytes`);
      checked.highlights++;
    }
    if (withBytes.length) {
      // A byte clicked selects the smallest field holding it.
      const [f] = withBytes[withBytes.length - 1];
      await page.click(`#hex .hexbytes .b[data-i="${f.start}"]`);
      const sel = await page.evaluate(() => window.rocescope.frame.all[window.rocescope.field]);
      assert.ok(sel.start <= f.start && f.start < sel.end, `${name}: byte ${f.start} selected ${JSON.stringify(sel)}`);
    }
    if (shots && name === 'ext-mix.pcapng') {
      mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: join(shots, 'inspector.png') });
    }
    await page.close();
    checked.fixtures++;
  }

  // The analysers in the page: the flow table, a flow's plot (a mark clicked selects its
  // frame), a retransmission's row coloured and its analysis fields, all as the command line.
  {
    const name = 'synth-gbn-loss.pcapng';
    const file = join(root, 'fixtures', name);
    const flows = JSON.parse(execFileSync(bin, ['flows', '--format', 'json', file]).toString()).flows;
    const timeline = JSON.parse(execFileSync(bin, ['timeline', '--format', 'json', file]).toString()).flows;
    const decoded = JSON.parse(execFileSync(bin, ['decode', '--analysis', '--format', 'json', file]).toString());
    await openPage(`capture=/fixtures/${name}`);
    await page.waitForFunction(() => window.rocescope.analysis !== null, null, { timeout: 60000 });
    await page.click('#flows-pane summary');
    const ids = await page.$$eval('#flows tbody tr td:first-child', (c) => c.map((x) => x.textContent));
    assert.deepEqual(ids, flows.map((f) => f.id), 'the flow table');
    const lossy = timeline.findIndex((f) => f.losses.length > 0);
    assert.ok(lossy >= 0, 'a flow with losses');
    await page.click(`#flows tbody tr[data-index="${lossy}"]`);
    await page.waitForSelector('#plot svg');
    const marks = await page.$$eval('#plot .loss', (m) => m.map((x) => Number(x.dataset.frame)));
    assert.deepEqual(marks.sort((a, b) => a - b), timeline[lossy].losses.map((l) => l.frame).sort((a, b) => a - b), 'loss marks');
    const frame = marks[0];
    await page.click(`#plot .loss[data-frame="${frame}"]`);
    await page.waitForFunction((n) => window.rocescope.frame?.info?.number === n, frame);
    // The first retransmission the command line names: its row is coloured, its tree lists the
    // analysis fields decode --analysis gives it.
    await page.fill('#filter', '');
    await page.waitForFunction(() => document.getElementById('filter-bar').className === '');
    const retx = decoded.find((f) => f['rocescope.analysis.retransmission']);
    await clickFrame(retx.frame);
    const bad = await page.$eval(`#list-rows .row[data-number="${retx.frame}"]`, (r) => r.classList.contains('bad'));
    assert.ok(bad, `frame ${retx.frame} coloured`);
    const got = Object.fromEntries(await page.$$eval('#tree .field[data-kind="analysis"]', (rows) => rows.map((r) => [r.dataset.name, r.querySelector('.fvalue').textContent])));
    const want = Object.fromEntries(Object.entries(retx).filter(([k]) => k.startsWith('rocescope.analysis.')).map(([k, v]) => [k, text(v)]));
    assert.deepEqual(got, want, `frame ${retx.frame}'s analysis fields`);
    checked.analysis = marks.length;
    if (shots) await page.screenshot({ path: join(shots, 'inspector-analysis.png') });
    await page.close();
  }

  // Display filters typed in the box: the frames the command line prints.
  const filterCases = [
    ['synth-gbn-loss.pcapng', 'rocescope.aeth.kind == nak'],
    ['ext-mix.pcapng', 'rocescope.warning'],
    ['synth-erd-loss.pcapng', 'rocescope.erd.nack.psn'],
  ];
  for (const [name, filter] of filterCases) {
    const want = cliFilter(join(root, 'fixtures', name), filter);
    await openPage(`capture=/fixtures/${name}`);
    await page.fill('#filter', filter);
    await page.waitForFunction(() => document.getElementById('filter-bar').className === 'valid', null, { timeout: 20000 });
    const shown = await page.evaluate(() => window.rocescope.shown);
    assert.equal(shown, want.length, `${name}: ${filter}`);
    await page.waitForFunction((n) => document.querySelectorAll('#list-rows .row[data-number]').length >= Math.min(n, 10), want.length);
    const numbers = await page.$$eval('#list-rows .row[data-number]', (r) => r.map((x) => Number(x.dataset.number)));
    assert.deepEqual(numbers, want.slice(0, numbers.length), `${name}: ${filter}: rows`);
    checked.filters++;
    await page.close();
  }
  {
    await openPage('capture=/fixtures/synth-gbn-loss.pcapng');
    const frames = await page.evaluate(() => window.rocescope.shown);
    await page.fill('#filter', 'rocescope.bth.psn ==');
    await page.waitForFunction(() => document.getElementById('filter-bar').className === 'invalid');
    const why = await page.textContent('#filter-state');
    assert.ok(why.length > 5, `a reason: ${why}`);
    assert.equal(await page.evaluate(() => window.rocescope.shown), frames, 'a bad filter keeps the rows');
    // A maps box being typed (not yet valid): an error, and the list as it was.
    await page.fill('#filter', '');
    await page.waitForFunction(() => document.getElementById('filter-bar').className === '');
    await page.fill('#maps', 'qpn=0x12=');
    await page.waitForSelector('#status.error', { timeout: 10000 });
    assert.match(await page.textContent('#status'), /options: /, 'the maps error');
    assert.equal(await page.evaluate(() => window.rocescope.shown), frames, 'the list stays while the maps are typed');
    assert.ok(await page.$$eval('#list-rows .row[data-number]', (r) => r.length) > 0, 'rows still drawn');
    // Completed: the capture is decoded again with it.
    await page.fill('#maps', 'qpn=0x12=flor');
    await page.waitForFunction(() => !document.querySelector('#status.error') && window.rocescope.summary?.frames > 0, null, { timeout: 20000 });
    // A flow of the flow table clicked: that flow only.
    await page.click('#flows-pane summary');
    const flows = await page.evaluate(() => window.rocescope.summary.flows);
    await page.click('#flows tbody tr:first-child');
    await page.waitForFunction(() => document.getElementById('filter-bar').className === 'valid');
    assert.equal(await page.evaluate(() => window.rocescope.shown), flows[0].packets, 'the flow\'s packets');
    checked.filters++;
    await page.close();
  }

  // Damaged files: a readable error, and the frames before the damage.
  const good = readFileSync(join(root, 'fixtures/synth-gbn-loss.pcapng'));
  made.set('cut.pcapng', good.subarray(0, Math.floor(good.length / 2) + 7));
  made.set('garbage.pcap', Buffer.from('this is not a capture file, only text'.repeat(10)));
  made.set('empty.pcapng', Buffer.alloc(0));
  for (const [name, want] of [['cut.pcapng', /byte \d+/], ['garbage.pcap', /byte 0: not a pcap or pcapng file/], ['empty.pcapng', /empty file/]]) {
    writeFileSync(join(dirname(bin), `.e2e-${name}`), made.get(name));
    const cli = (() => {
      try {
        return JSON.parse(execFileSync(bin, ['decode', '--format', 'json', join(dirname(bin), `.e2e-${name}`)], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()).length;
      } catch (e) {
        try { return JSON.parse(e.stdout.toString()).length; } catch { return 0; }
      }
    })();
    await openPage(`capture=/made/${name}`);
    await page.waitForSelector('#status.error');
    const status = await page.textContent('#status');
    assert.match(status, want, `${name}: ${status}`);
    const shown = await page.evaluate(() => window.rocescope.shown);
    assert.equal(shown, cli, `${name}: the frames before the damage`);
    if (name === 'cut.pcapng') assert.ok(shown > 0, 'frames before the cut');
    checked.errors++;
    await page.close();
  }
  // A link type rocescope does not decode (802.11): listed, each byte data, no error.
  {
    const head = Buffer.alloc(24);
    head.writeUInt32LE(0xa1b2c3d4, 0); head.writeUInt16LE(2, 4); head.writeUInt16LE(4, 6);
    head.writeUInt32LE(65535, 16); head.writeUInt32LE(105, 20);
    const body = Buffer.concat([Buffer.from([8, 2]), Buffer.alloc(30)]);
    const rec = Buffer.alloc(16);
    rec.writeUInt32LE(1700000000, 0); rec.writeUInt32LE(body.length, 8); rec.writeUInt32LE(body.length, 12);
    made.set('wifi.pcap', Buffer.concat([head, rec, body, rec, body]));
    await openPage('capture=/made/wifi.pcap');
    assert.equal(await page.evaluate(() => window.rocescope.summary.frames), 2, 'an unsupported link type: its frames listed');
    await clickFrame(1);
    const rows = await page.$$eval('#tree .field', (r) => r.map((x) => x.dataset.name));
    assert.deepEqual(rows, ['data.data'], 'its bytes as data');
    checked.errors++;
    await page.close();
  }
  assert.deepEqual(pageErrors, [], 'errors in the page');
  console.log(JSON.stringify(checked));
} finally {
  await browser.close();
  server.close();
}
