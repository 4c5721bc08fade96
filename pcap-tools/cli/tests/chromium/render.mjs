// Renders rocescope's SVG plots in Debian's headless chromium (driven by playwright-core) for
// pcap-tools/cli/tests/plot_chromium.rs, and prints what the page saw as one JSON line.
//
//   node render.mjs FLOW.svg OVERVIEW.svg
//
// Both files must be in one directory: an index.html is written there that shows them as <img>
// (chromium decodes them as images: naturalWidth/naturalHeight), and each SVG's text is also
// parsed as XML in the page and put inline, where the marks are counted and measured. A
// screenshot of the page is left beside them (page.png).
import { chromium } from 'playwright-core';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [flowPath, overviewPath] = process.argv.slice(2).map((p) => resolve(p));
if (!flowPath || !overviewPath || dirname(flowPath) !== dirname(overviewPath)) {
  console.error('usage: node render.mjs FLOW.svg OVERVIEW.svg (in one directory)');
  process.exit(2);
}
const dir = dirname(flowPath);
const index = join(dir, 'index.html');
const img = (p, id) => `<img id="${id}" src="${encodeURIComponent(basename(p))}">`;
writeFileSync(index, `<!doctype html><html><body style="margin:0">${img(flowPath, 'flow')}${img(overviewPath, 'overview')}<div id="inline"></div></body></html>`);

// No background networking: this machine's network is closed, and chromium's own connections
// would only be refused.
const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args });
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(pathToFileURL(index).href);
  const result = await page.evaluate(async ([flowText, overviewText]) => {
    const out = {};
    for (const id of ['flow', 'overview']) {
      const el = document.getElementById(id);
      try {
        await el.decode();
        out[id] = { decoded: true, naturalWidth: el.naturalWidth, naturalHeight: el.naturalHeight };
      } catch (e) {
        out[id] = { decoded: false, error: String(e) };
      }
    }
    // Inline: parsed as XML (a malformed file gives a <parsererror> document), then in the DOM.
    const inline = (text) => {
      const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
      const bad = doc.getElementsByTagName('parsererror').length > 0;
      const svg = document.importNode(doc.documentElement, true);
      document.getElementById('inline').appendChild(svg);
      return { svg, bad };
    };
    const flow = inline(flowText);
    // Each mark's drawn box (in the SVG's user space) is centred on its x/y attributes.
    const centre = (el) => {
      const b = el.getBBox();
      return { x: Number(el.getAttribute('x')), y: Number(el.getAttribute('y')), cx: b.x + b.width / 2, cy: b.y + b.height / 2 };
    };
    out.flowInline = {
      parserError: flow.bad,
      losses: flow.svg.querySelectorAll('.loss').length,
      retransmissions: flow.svg.querySelectorAll('.retx').length,
      lossPsns: [...flow.svg.querySelectorAll('.loss')].map((e) => Number(e.dataset.psn)),
      lossFrames: [...flow.svg.querySelectorAll('.loss')].map((e) => Number(e.dataset.frame)),
      centres: [...flow.svg.querySelectorAll('.loss, .retx')].map(centre),
    };
    const overview = inline(overviewText);
    out.overviewInline = {
      parserError: overview.bad,
      goodputLines: overview.svg.querySelectorAll('.goodput').length,
      cdf: overview.svg.querySelectorAll('.cdf').length,
    };
    return out;
  }, [readFileSync(flowPath, 'utf8'), readFileSync(overviewPath, 'utf8')]);
  await page.screenshot({ path: join(dir, 'page.png'), fullPage: true });
  result.pageErrors = errors;
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
