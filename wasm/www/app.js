// rocescope inspector: lays out what the Rust decoder answers. The capture lives in a Web
// Worker (worker.js, the Rust Inspector of wasm/src/inspector.rs): it is indexed once, and the
// page asks for what it shows — the visible rows of the packet list, the selected frame's
// fields and bytes, the flows — each decoded when asked for. All decoding, value formatting,
// summaries and display filters are Rust's; this file only draws the list (virtualised: only
// the visible rows are in the DOM), the field tree and the hex view, and turns the inputs into
// options.
//
// URL parameters (for links, headless tests and screenshots): ?capture=URL loads a capture,
// &frame=N selects a frame, &field=NAME selects a field, &filter=… applies a display filter,
// &flows=1 opens the flow table, &profile=…, &maps=…, and any parameter key (dcp_tag_shift=3 …)
// presets an option. window.rocescope exposes the page's state to tests.

import init, { fields_registry, params_table } from './pkg/rocescope_wasm.js';

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k in e) e[k] = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
};

// Height of a row of the packet list, px (style.css: .row), rows asked for at a time, and rows
// drawn beyond the visible ones.
const ROW_H = 20;
const BLOCK = 256;
const OVERSCAN = 10;
// The tallest the list's scrolled area is made (browsers cap an element's height near 2^25 px):
// past it, the scroll bar's range is mapped onto the rows' (5 M rows are 100 M px).
const MAX_PX = 8000000;
// The largest file the page opens: the worker's WebAssembly memory holds the file and its
// index (40 bytes a frame) within the 4 GiB a wasm32 module can address; browsers give less.
const MAX_FILE = 1536 * 1024 * 1024;

const state = {
  name: '',
  registry: new Map(), // field name -> { type, desc, values, repeated, group, group_label }
  summary: null, // the Inspector's summary (frames, stats, flows, error)
  analysis: null, // the analysers' flow table and timeline heads, once they ran
  flow: null, // the flow of the timeline whose plot is shown (its index)
  shown: 0, // rows in the list (all frames, or the filter's matches so far)
  rows: new Map(), // row index -> row (from the worker), for the current view
  asked: new Set(), // blocks of rows asked for, for the current view
  view: 0, // generation of the view (a new capture or filter starts a new one)
  selected: null, // frame number
  selectedRow: -1,
  frame: null, // the selected frame: { info, bytes }
  field: null, // selected field index in the frame
  hexSpans: [], // per byte of the selected frame: [hex span, ascii span]
  loading: false,
  filter: { text: '', problem: null, done: 1 },
  timings: {}, // for the benchmark (wasm/test/page_bench.mjs): ms of the last open, row click, filter
};
window.rocescope = state;
// For the benchmark: the worker's memory (its module's and its JavaScript heap), bytes.
state.memory = () => request('memory');

// ---- the worker ---------------------------------------------------------------------------

let worker = null;
let nextId = 1;
const pending = new Map(); // request id -> { resolve, reject, progress }

function startWorker() {
  worker?.terminate();
  for (const p of pending.values()) p.reject({ message: 'the worker was restarted' });
  pending.clear();
  worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  worker.onmessage = (e) => {
    const m = e.data;
    const p = pending.get(m.id);
    if (!p) return;
    if (m.type === 'progress' || (m.type === 'filtered' && m.done < 1)) {
      p.progress?.(m);
      return;
    }
    pending.delete(m.id);
    if (m.type === 'failed') p.reject(m);
    else p.resolve(m);
  };
  worker.onerror = (e) => {
    e.preventDefault();
    for (const p of pending.values()) p.reject({ message: `the decoder's worker failed: ${e.message || 'could not start'}` });
    pending.clear();
  };
}

function request(type, payload = {}, { transfer = [], progress = null } = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, progress, type });
    worker.postMessage({ type, id, ...payload }, transfer);
  });
}

// ---- options ------------------------------------------------------------------------------

// Input widths per kind of parameter (params_table's `kind`).
const PARAM_SIZE = { u8: 5, u16: 6, u32: 8, u64: 12, split: 8 };

// The parameters panel: one control per entry of the codec's parameter table (params_table()),
// before the reset button. name = the option key; a text input's placeholder is the default
// ("auto" when the decoder derives it), a menu starts at the default; title = the help text.
function buildParams(table) {
  const form = $('params');
  const reset = form.querySelector('button[type="reset"]');
  for (const p of table) {
    const title = `${p.help} (${p.flag})`;
    const control = p.kind === 'enum'
      ? el('select', { name: p.name, dataset: { default: p.default } },
        ...p.values.map((v) => el('option', { value: v, defaultSelected: v === p.default }, v)))
      : el('input', {
        name: p.name, placeholder: p.optional ? 'auto' : p.default, size: PARAM_SIZE[p.kind] ?? 8,
        spellcheck: false, dataset: { default: p.default },
      });
    form.insertBefore(el('label', { title }, `${p.name} `, control), reset);
  }
}

// The options object for the decoder: what differs from the defaults.
function options() {
  const o = { profile: $('profile').value };
  const maps = $('maps').value.trim();
  if (maps) o.maps = maps;
  for (const input of $('params').elements) {
    if (!input.name) continue;
    const v = input.value.trim();
    if (v !== '' && v !== input.dataset.default) o[input.name] = v;
  }
  return o;
}

function presetFromUrl(params) {
  if (params.has('profile')) $('profile').value = params.get('profile');
  if (params.has('maps')) $('maps').value = params.get('maps');
  if (params.has('filter')) $('filter').value = params.get('filter');
  for (const input of $('params').elements) {
    if (input.name && params.has(input.name)) {
      input.value = params.get(input.name);
      $('params').hidden = false;
    }
  }
}

// ---- status -------------------------------------------------------------------------------

function showError(text) {
  const s = $('status');
  s.className = 'error';
  s.replaceChildren(el('span', {}, text));
}

function showProgress(what, m) {
  const s = $('status');
  s.className = 'progress';
  const pct = m.total ? Math.min(100, (100 * m.bytes) / m.total) : 0;
  s.replaceChildren(el('span', {}, `${what}: ${m.frames.toLocaleString()} frames, ${pct.toFixed(0)} %`),
    el('progress', { max: 100, value: pct }));
}

function renderStatus(ms) {
  const r = state.summary;
  const s = $('status');
  s.replaceChildren();
  s.className = '';
  if (r.error) {
    s.className = 'error';
    const where = r.error.offset === null ? '' : ` (frames after byte ${r.error.offset} are not shown)`;
    s.append(el('span', {}, `${state.name}: ${r.error.text}${r.frames ? where : ''}`));
    if (r.error.offset === null) return;
  }
  const per = Object.entries(r.stats.packets).filter(([, n]) => n > 0).map(([p, n]) => `${p} ${n}`).join(' · ');
  const parts = [
    `${r.stats.frames.toLocaleString()} frames`,
    `${r.stats.roce.toLocaleString()} RoCE${per ? ` (${per})` : ''}`,
    `${r.flows.length} flows`,
  ];
  if (r.stats.flows_unsure) {
    parts.push(`auto: ${r.stats.packets_unsure} packets in ${r.stats.flows_unsure} flows could not be classified (decoded as std)`);
  }
  parts.push(`indexed in ${ms.toFixed(0)} ms`);
  if (state.analysis) {
    const fl = state.analysis.flows.flows;
    const sum = (k) => fl.reduce((a, f) => a + f[k], 0);
    parts.push(`analysed in ${state.timings.analysis.toFixed(0)} ms: ${sum('losses')} losses, ${sum('retransmitted')} retransmitted`);
  }
  parts.push(`index ${((r.frames * r.entry_bytes) / 1048576).toFixed(1)} MB for a ${(r.file_bytes / 1048576).toFixed(1)} MB file`);
  s.append(el('span', { class: r.error ? 'after-error' : '' }, (r.error ? ' — ' : '') + parts.join(' · ')));
}

// ---- opening ------------------------------------------------------------------------------

async function openFile(file) {
  state.timings = { t0: performance.now() };
  if (file.size > MAX_FILE) {
    showError(`${file.name}: ${file.size.toLocaleString()} bytes is more than this page can hold ` +
      `(${MAX_FILE.toLocaleString()} bytes: the file and its index live in the browser's memory). Cut it first, ` +
      `e.g. editcap -r ${file.name} part.pcapng 1-1000000, or use the rocescope command.`);
    return;
  }
  let buf;
  try {
    buf = await file.arrayBuffer();
  } catch (err) {
    showError(`${file.name}: the browser could not read the file (${err.message})`);
    return;
  }
  await open(buf, file.name);
}

async function open(buf, name) {
  state.timings.read = performance.now() - (state.timings.t0 ?? performance.now());
  state.name = name;
  $('filename').textContent = `${name} — ${buf.byteLength.toLocaleString()} bytes`;
  $('filename').title = $('filename').textContent;
  $('filename').classList.remove('muted');
  startWorker();
  await index('open', { bytes: buf, options: options() }, [buf]);
}

// Indexes (open) or indexes again (reindex), then shows the list.
async function index(type, payload, transfer = []) {
  if (type === 'reindex') {
    // Options that do not parse (a maps box still being typed) leave the list as it is.
    const m = await request('reindex', payload, { progress: (p) => showProgress('indexing', p) }).catch((err) => err);
    if (m.type === 'refused') {
      showError(`${m.problem} — the capture is shown as decoded before`);
      return;
    }
    if (m.type !== 'opened') {
      showError(`${state.name}: ${m.message}`);
      return;
    }
    return shown(m, state.selected, 0);
  }
  const keep = state.selected;
  state.loading = true;
  resetView(0);
  state.summary = null;
  state.analysis = null;
  state.flow = null;
  $('plot-pane').open = false;
  renderFlows();
  const t0 = performance.now();
  let m;
  try {
    m = await request(type, payload, { transfer, progress: (p) => showProgress('indexing', p) });
  } catch (err) {
    state.loading = false;
    showError(`${state.name}: ${err.message}${err.trapped ? ' — the decoder stopped; open the file again' : ''}`);
    if (err.trapped) startWorker();
    return;
  }
  return shown(m, keep, performance.now() - t0);
}

// The capture (re)indexed: the status, the flows, the list, the frame selected before.
async function shown(m, keep, ms) {
  state.timings.open = ms;
  state.loading = false;
  state.analysis = null;
  state.summary = m.summary;
  renderStatus(ms);
  renderFlows();
  resetView(m.shown);
  const f = $('filter').value.trim();
  if (f) await applyFilter(f);
  const number = keep && keep <= m.summary.frames ? keep : m.summary.frames ? 1 : null;
  await select(number, keep === number ? state.field : null);
  if (m.summary.frames) analyze(ms);
}

// Runs the analysers in the worker (after the first rows are shown): the flow table, the
// flows' plots and timelines, and each frame's analysis flags and fields.
async function analyze(indexMs) {
  const t0 = performance.now();
  let m;
  try {
    m = await request('analyze', {}, { progress: (p) => showProgress('analysing', { frames: state.summary.frames, bytes: p.bytes, total: 1 }) });
  } catch (err) {
    showError(`analysis: ${err.message}`);
    return;
  }
  state.timings.analysis = performance.now() - t0;
  state.analysis = m.analysis;
  renderStatus(indexMs);
  renderFlows();
  // The rows and the frame shown again, with what the analysers say of them.
  state.rows.clear();
  state.asked.clear();
  renderRows();
  if (state.selected) await select(state.selected, state.field);
  if (state.flow !== null) showFlow(state.flow);
}

// ---- packet list (virtualised) ------------------------------------------------------------

function resetView(shown) {
  state.view++;
  state.shown = shown;
  state.rows.clear();
  state.asked.clear();
  setHeight(shown);
  $('empty').hidden = shown > 0 || (state.summary?.frames ?? 0) > 0;
  $('list').hidden = !state.summary;
  $('list-head').hidden = !state.summary;
  renderRows();
}

// More rows matched (a filter running): the rows already known stay.
function growView(shown) {
  // (The block that was the last one was asked for while shorter: ask for it again.)
  if (shown > state.shown) state.asked.delete(Math.floor(state.shown / BLOCK));
  state.shown = shown;
  setHeight(shown);
  renderRows();
}

function setHeight(shown) {
  $('list-spacer').style.height = `${Math.min(shown * ROW_H, MAX_PX)}px`;
}

// How many px of rows one px of scrolling moves past (1 until the rows outgrow MAX_PX).
function scale() {
  const h = $('list').clientHeight;
  const rows = state.shown * ROW_H;
  return rows <= MAX_PX || MAX_PX <= h ? 1 : (rows - h) / (MAX_PX - h);
}

// Where the list's view starts among the rows, px.
function virtualTop() {
  return $('list').scrollTop * scale();
}

function visibleRange() {
  const list = $('list');
  const top = virtualTop();
  const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const last = Math.min(state.shown, Math.ceil((top + list.clientHeight) / ROW_H) + OVERSCAN);
  return [first, last];
}

function askRows(first, last) {
  const view = state.view;
  for (let b = Math.floor(first / BLOCK); b * BLOCK < last; b++) {
    if (state.asked.has(b)) continue;
    state.asked.add(b);
    request('rows', { first: b * BLOCK, count: BLOCK }).then((m) => {
      if (view !== state.view) return;
      m.rows.forEach((r, k) => state.rows.set(m.first + k, r));
      renderRows();
    }, () => state.asked.delete(b));
  }
}

// The analysis flags that colour a row as Wireshark colours bad TCP.
const BAD = new Set(['retransmission', 'loss', 'out_of_order', 'psn_gap', 'duplicate_nak']);

function rowElement(r, k) {
  const info = el('span', { class: 'c-info' }, r.summary);
  for (const w of r.warnings) info.append(' ', el('span', { class: 'warning' }, w));
  // (As Wireshark's "Bad TCP" colouring rule marks tcp.analysis.flags.)
  const bad = r.flags.some((f) => BAD.has(f));
  const cls = ['row', bad ? 'bad' : r.warnings.length ? 'warn' : r.profile ? '' : 'other', k % 2 ? 'odd' : '',
    r.number === state.selected ? 'selected' : ''].filter(Boolean).join(' ');
  return el('div', { class: cls, role: 'row', title: r.flags.join(', '), dataset: { number: r.number, row: k, flags: r.flags.join(' ') } },
    el('span', { class: 'c-num' }, String(r.number)),
    el('span', { class: 'c-time' }, r.time),
    el('span', { class: 'c-addr' }, r.src ? `${r.src} → ${r.dst}` : '—'),
    el('span', { class: 'c-proto' }, r.protocol),
    el('span', { class: 'c-prof' }, r.profile ? el('span', { class: `profile p-${r.profile}` }, r.profile) : ''),
    info);
}

function renderRows() {
  const [first, last] = visibleRange();
  askRows(first, last);
  const box = $('list-rows');
  box.style.top = `${$('list').scrollTop + first * ROW_H - virtualTop()}px`;
  const out = [];
  for (let k = first; k < last; k++) {
    const r = state.rows.get(k);
    out.push(r ? rowElement(r, k) : el('div', { class: 'row loading', dataset: { row: k } }, el('span', { class: 'c-num' }, '…')));
  }
  box.replaceChildren(...out);
  if (state.timings.firstRows === undefined && state.timings.t0 !== undefined && out.some((r) => r.dataset.number)) {
    state.timings.firstRows = performance.now() - state.timings.t0;
  }
}

// Scrolls the list so that `row` is in view (in its middle with `centre`).
function scrollToRow(row, centre = false) {
  if (row < 0) return;
  const list = $('list');
  const top = row * ROW_H;
  const view = virtualTop();
  let want = view;
  if (centre) want = top - list.clientHeight / 2;
  else if (top < view) want = top;
  else if (top + ROW_H > view + list.clientHeight) want = top + ROW_H - list.clientHeight;
  if (want !== view) list.scrollTop = Math.max(0, want) / scale();
  renderRows();
}
// For tests: scrolls row `row` into the middle of the list.
state.showRow = (row) => scrollToRow(row, true);

// ---- display filter -----------------------------------------------------------------------

let filterTimer = 0;
let filterReq = null;

async function applyFilter(text) {
  if (filterReq !== null) pending.delete(filterReq);
  const id = nextId; // (the id request() takes)
  filterReq = id;
  const t0 = performance.now();
  state.filter = { text, problem: null, done: 0 };
  $('filter-bar').className = text ? 'running' : '';
  resetView(0);
  const progress = (m) => {
    if (filterReq !== id) return;
    state.filter.done = m.done;
    $('filter-state').textContent = `${m.shown.toLocaleString()} shown, ${(100 * m.done).toFixed(0)} % looked at…`;
    if (state.timings.filterFirst === undefined) state.timings.filterFirst = performance.now() - t0;
    growView(m.shown);
  };
  state.timings.filterFirst = undefined;
  let m;
  try {
    m = await request('filter', { text }, { progress });
  } catch (err) {
    showError(`filter: ${err.message}`);
    return;
  }
  if (filterReq !== id) return;
  filterReq = null;
  state.timings.filter = performance.now() - t0;
  state.filter.done = 1;
  if (m.problem) {
    state.filter.problem = m.problem;
    $('filter-bar').className = 'invalid';
    $('filter-state').textContent = m.problem.message;
    $('filter').title = m.problem.message;
    growView(m.shown);
    // The rows shown before the bad filter stay: ask again for them.
    resetView(m.shown);
    return;
  }
  $('filter-bar').className = text ? 'valid' : '';
  $('filter-state').textContent = text ? `${m.shown.toLocaleString()} of ${state.summary.frames.toLocaleString()} frames` : '';
  growView(m.shown);
  if (state.selected) scrollToRow((await request('row_of', { number: state.selected })).row);
}

// ---- flows --------------------------------------------------------------------------------

// The display filter that shows one flow (one direction of one QP).
function flowFilter(fl) {
  const ip = fl.src.includes(':') ? 'ipv6' : 'ip';
  return `${ip}.src == ${fl.src} && ${ip}.dst == ${fl.dst} && rocescope.bth.destqp == ${fl.destqp}`;
}

const us = (ns) => (ns === null || ns === undefined ? '—' : `${(ns / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 })} µs`);
const rate = (bps) => (bps === null || bps === undefined ? '—' : `${(bps / 1e9).toFixed(2)} Gb/s`);

function renderFlows() {
  const tbody = $('flows').querySelector('tbody');
  if (state.analysis) {
    // The analysers' flow table (rocescope flows).
    const rows = state.analysis.flows.flows;
    tbody.replaceChildren(...rows.map((fl, i) => el(
      'tr',
      { title: 'Plot this flow and show only its frames', dataset: { index: i, filter: flowFilter(fl) }, class: i === state.flow ? 'selected' : '' },
      el('td', { class: 'addr' }, fl.id),
      el('td', {}, el('span', { class: `profile p-${fl.profile}` }, fl.transport)),
      el('td', {}, `${fl.tap} (${fl.role})`),
      el('td', { class: 'num' }, fl.frames.toLocaleString()),
      el('td', { class: 'num' }, fl.bytes.toLocaleString()),
      el('td', { class: 'num' }, fl.retransmitted.toLocaleString()),
      el('td', { class: 'num' }, fl.losses.toLocaleString()),
      el('td', { class: 'num' }, fl.out_of_order.toLocaleString()),
      el('td', { class: 'num' }, `${fl.messages_completed}/${fl.messages}`),
      el('td', { class: 'num' }, us(fl.fct_ns)),
      el('td', { class: 'num' }, us(fl.rtt.avg_ns)),
      el('td', { class: 'num' }, rate(fl.goodput_bps)),
    )));
    $('flow-count').textContent = `(${rows.length})`;
    return;
  }
  const flows = state.summary?.flows ?? [];
  tbody.replaceChildren(
    ...flows.map((fl) =>
      el(
        'tr',
        { title: 'Show only this flow', dataset: { filter: flowFilter(fl) } },
        el('td', { class: 'addr' }, fl.id),
        el('td', {}, el('span', { class: `profile p-${fl.profile}` }, fl.profile)),
        el('td', {}, state.summary ? 'analysing…' : ''),
        el('td', { class: 'num' }, fl.packets.toLocaleString()),
        el('td', { class: 'num' }, fl.bytes.toLocaleString()),
      ),
    ),
  );
  $('flow-count').textContent = state.summary ? `(${flows.length})` : '';
}

// ---- a flow's plot and messages ----------------------------------------------------------------

// Shows flow `i` of the timeline: its plot (rocescope timeline --svg's: a mark per loss,
// retransmission and message completion, each naming its frame) and its messages.
async function showFlow(i) {
  state.flow = i;
  const m = await request('flow', { index: i });
  if (state.flow !== i || !m.timeline) return;
  const t = m.timeline;
  $('plot-pane').open = true;
  $('plot-title').textContent = `— ${t.id}: ${t.losses.length} losses, ${t.retransmissions.length} retransmissions, ${t.messages.length} messages (click a mark for its frame)`;
  const plot = $('plot');
  if (m.svg) {
    // (The SVG is the Rust plotter's own output, not the capture's bytes.)
    const doc = new DOMParser().parseFromString(m.svg, 'image/svg+xml');
    plot.replaceChildren(document.importNode(doc.documentElement, true));
  } else {
    plot.replaceChildren(el('p', { class: 'placeholder' }, 'No data packets to plot in this flow.'));
  }
  const SHOWN = 500;
  $('messages').querySelector('tbody').replaceChildren(...t.messages.slice(0, SHOWN).map((msg) => el('tr', {},
    el('td', { class: 'num' }, String(msg.index)),
    el('td', {}, msg.op),
    el('td', { class: 'num' }, el('a', { href: '#', dataset: { frame: msg.first_frame } }, String(msg.first_frame))),
    el('td', { class: 'num' }, msg.complete_frame ? el('a', { href: '#', dataset: { frame: msg.complete_frame } }, String(msg.complete_frame)) : 'not completed'),
    el('td', { class: 'num' }, msg.packets === null ? '—' : String(msg.packets)),
    el('td', { class: 'num' }, String(msg.retransmitted)),
    el('td', { class: 'num' }, us(msg.latency_ns)),
  )));
  if (t.messages.length > SHOWN) {
    $('messages').querySelector('tbody').append(el('tr', {}, el('td', { colSpan: 7, class: 'muted' }, `… and ${t.messages.length - SHOWN} more (rocescope timeline lists them all)`)));
  }
  for (const tr of $('flows').querySelectorAll('tbody tr')) tr.classList.toggle('selected', Number(tr.dataset.index) === i);
}

// ---- field tree ---------------------------------------------------------------------------

// The subtree of a field and its short name, from the registry (codec/src/field_group.rs, the
// table the Wireshark plugin groups by): "rocescope.sdr.ctrl.type" -> ["sdr.ctrl", "type"].
function groupOf(name) {
  const def = state.registry.get(name);
  return [def ? def.group : 'frame', name.split('.').pop()];
}

function groupLabel(group, items) {
  if (items[0][0].kind === 'layer') return items[0][0].label;
  if (items[0][0].kind === 'analysis') return 'RoCE analysis (rocescope.analysis)';
  const def = state.registry.get(items[0][0].name);
  return (def && def.group_label) || group.toUpperCase();
}

function tooltip(field) {
  if (field.kind === 'layer') return `${field.name}\nbytes ${field.start}..${field.end}`;
  if (field.kind === 'analysis') return `${field.name}\nwhat the analysers say of this frame (rocescope decode --analysis)`;
  const def = state.registry.get(field.name);
  const lines = [];
  if (def) lines.push(def.desc);
  lines.push(`${field.name}${def ? ` (${def.type}${def.values.length ? `: ${def.values.join(' ')}` : ''})` : ''}`);
  lines.push(field.end > field.start ? `bytes ${field.start}..${field.end}` : 'derived (no bytes of its own)');
  return lines.join('\n');
}

function renderTree(frame) {
  const tree = $('tree');
  if (!frame) {
    tree.replaceChildren(el('p', { class: 'placeholder' }, 'Select a packet to see its fields.'));
    return;
  }
  const head = el('div', { class: 'tree-head' },
    el('strong', {}, `Frame ${frame.number}`),
    `: ${frame.len} bytes on the wire, ${frame.cap_len} captured`,
    frame.src ? `, ${frame.src} → ${frame.dst}` : '',
    ` (${frame.protocol})`);
  const groups = new Map();
  state.frame.all.forEach((f, i) => {
    const [g, short] = f.kind === 'layer' ? [`layer:${f.group}`, f.name]
      : f.kind === 'analysis' ? ['analysis', f.name.replace('rocescope.analysis.', '')] : groupOf(f.name);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push([f, short, i]);
  });
  const nodes = [head];
  if (frame.fields.length === 0 && frame.layers.length === 0) {
    nodes.push(el('p', { class: 'placeholder' },
      frame.cap_len === 0 ? 'Link type not decoded by rocescope.' : 'Not RoCE: no rocescope fields.'));
  }
  // Headers in wire order (the walk gives extension headers after the IBTA ones); the frame's
  // own values first.
  const wireStart = (g, items) => {
    if (g === 'frame') return -1;
    if (g === 'analysis') return Number.MAX_SAFE_INTEGER; // (last, as Wireshark's [SEQ/ACK analysis])
    const starts = items.filter(([f]) => f.end > f.start).map(([f]) => f.start);
    return starts.length ? Math.min(...starts) : Number.MAX_SAFE_INTEGER;
  };
  const ordered = [...groups].map(([g, items], k) => [g, items, wireStart(g, items), k]);
  ordered.sort((a, b) => a[2] - b[2] || a[3] - b[3]);
  for (const [g, items] of ordered) {
    const spans = items.map(([f]) => f).filter((f) => f.end > f.start);
    const range = spans.length && g !== 'frame'
      ? ` [${Math.min(...spans.map((f) => f.start))}..${Math.max(...spans.map((f) => f.end))}]` : '';
    const det = el('details', { open: true, class: 'group' },
      el('summary', {}, groupLabel(g, items), el('span', { class: 'muted' }, range)));
    for (const [f, short, i] of items) {
      const isWarning = f.name === 'rocescope.warning';
      const row = el('div', {
        class: `field${f.end > f.start ? '' : ' derived'}${isWarning ? ' warning' : ''}`,
        title: tooltip(f),
        tabIndex: 0,
        dataset: { index: i, name: f.name, kind: f.kind },
      }, el('span', { class: 'fname' }, short), ': ', el('span', { class: 'fvalue' }, f.value));
      det.append(row);
    }
    nodes.push(det);
  }
  tree.replaceChildren(...nodes);
}

// ---- hex view -----------------------------------------------------------------------------

// (Written as one HTML string: a frame of 1,500 bytes is 3,000 spans, which element by
// element took most of a row click's time.)
const ESC = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' };
function renderHex(frame, data) {
  const hex = $('hex');
  state.hexSpans = [];
  if (!frame) {
    hex.replaceChildren();
    return;
  }
  const html = [];
  for (let off = 0; off < data.length; off += 16) {
    const h = [];
    const a = [];
    for (let i = off; i < Math.min(off + 16, data.length); i++) {
      const b = data[i];
      if (i > off) h.push(i - off === 8 ? '  ' : ' ');
      h.push(`<span class="b" data-i="${i}">${b.toString(16).padStart(2, '0')}</span>`);
      const c = b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '·';
      a.push(`<span class="b" data-i="${i}">${ESC[c] ?? c}</span>`);
    }
    html.push(`<div class="hexrow"><span class="off">${off.toString(16).padStart(4, '0')}</span><span class="hexbytes">${h.join('')}</span><span class="ascii">${a.join('')}</span></div>`);
  }
  if (data.length < frame.len) {
    html.push(`<div class="muted">… ${frame.len - data.length} bytes not captured</div>`);
  }
  hex.innerHTML = html.join('');
  const hb = hex.querySelectorAll('.hexbytes .b');
  const ab = hex.querySelectorAll('.ascii .b');
  for (let i = 0; i < hb.length; i++) state.hexSpans.push([hb[i], ab[i]]);
}

function highlight(index) {
  const frame = state.frame?.info;
  for (const e of $('hex').querySelectorAll('.b.hl')) e.classList.remove('hl');
  for (const e of $('tree').querySelectorAll('.field.selected')) e.classList.remove('selected');
  state.field = index;
  if (index === null || !frame) return;
  const f = state.frame.all[index];
  const row = $('tree').querySelector(`.field[data-index="${index}"]`);
  row?.classList.add('selected');
  row?.scrollIntoView({ block: 'nearest' });
  for (let i = f.start; i < Math.min(f.end, state.hexSpans.length); i++) {
    for (const e of state.hexSpans[i]) e.classList.add('hl');
  }
  state.hexSpans[f.start]?.[0].scrollIntoView({ block: 'nearest' });
}

// The field (of the registry's and the layers', `all`) with the smallest byte range that
// covers byte i.
function fieldAt(all, i) {
  let best = null;
  all.forEach((f, k) => {
    if (f.start <= i && i < f.end && (best === null || f.end - f.start < all[best].end - all[best].start)) best = k;
  });
  return best;
}

// ---- selection ----------------------------------------------------------------------------

async function select(number, fieldIndex = null) {
  const t0 = performance.now();
  state.selected = number;
  for (const e of $('list-rows').querySelectorAll('.row.selected')) e.classList.remove('selected');
  $('list-rows').querySelector(`.row[data-number="${number}"]`)?.classList.add('selected');
  if (!number) {
    state.frame = null;
    renderTree(null);
    renderHex(null);
    return;
  }
  const [m, at] = await Promise.all([request('frame', { number }), request('row_of', { number })]);
  if (state.selected !== number) return;
  // Every field of the tree: the registry's (`fields`), then the layers below RoCE and the
  // bytes no header claims (`layers`); `state.field` indexes this list.
  const all = m.info ? [
    ...m.info.fields.map((f) => ({ ...f, kind: 'field' })),
    ...m.info.layers.map((l) => ({ ...l, kind: 'layer' })),
    ...(m.info.analysis ?? []).map((a) => ({ ...a, kind: 'analysis', start: 0, end: 0 })),
  ] : [];
  state.frame = { info: m.info, bytes: m.bytes, all };
  state.selectedRow = at.row;
  renderTree(m.info);
  renderHex(m.info, m.bytes);
  highlight(fieldIndex !== null && fieldIndex < all.length ? fieldIndex : null);
  scrollToRow(at.row);
  state.timings.select = performance.now() - t0;
}

async function move(step) {
  if (!state.shown) return;
  const row = Math.max(0, Math.min(state.shown - 1, (state.selectedRow < 0 ? -1 : state.selectedRow) + step));
  let r = state.rows.get(row);
  if (!r) {
    const m = await request('rows', { first: row, count: 1 });
    [r] = m.rows;
  }
  if (r) await select(r.number);
}

// ---- wiring -------------------------------------------------------------------------------

function wire() {
  $('file').addEventListener('change', (e) => {
    const file = e.target.files[0];
    if (file) openFile(file);
  });
  document.addEventListener('dragover', (e) => {
    e.preventDefault();
    document.body.classList.add('dragging');
  });
  document.addEventListener('dragleave', (e) => {
    if (e.relatedTarget === null) document.body.classList.remove('dragging');
  });
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    const file = e.dataTransfer.files[0];
    if (file) openFile(file);
  });

  let timer = 0;
  const reindex = () => {
    if (state.summary) index('reindex', { options: options() });
  };
  const later = () => {
    clearTimeout(timer);
    timer = setTimeout(reindex, 400);
  };
  $('profile').addEventListener('change', reindex);
  // (Typing: indexed again once the text settles; the list stays until then.)
  $('maps').addEventListener('input', later);
  $('params').addEventListener('input', later);
  $('params').addEventListener('reset', () => setTimeout(reindex, 0));
  $('params').addEventListener('submit', (e) => {
    e.preventDefault();
    reindex();
  });
  $('params-toggle').addEventListener('click', () => {
    const p = $('params');
    p.hidden = !p.hidden;
    $('params-toggle').setAttribute('aria-expanded', String(!p.hidden));
  });
  $('filter').addEventListener('input', () => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => state.summary && applyFilter($('filter').value.trim()), 200);
  });
  $('filter').addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      clearTimeout(filterTimer);
      if (state.summary) applyFilter($('filter').value.trim());
    }
  });

  $('list').addEventListener('scroll', () => requestAnimationFrame(renderRows));
  new ResizeObserver(() => renderRows()).observe($('list'));
  $('list-rows').addEventListener('click', (e) => {
    const row = e.target.closest('.row[data-number]');
    if (row) select(Number(row.dataset.number));
  });
  $('flows').querySelector('tbody').addEventListener('click', (e) => {
    const tr = e.target.closest('tr');
    if (!tr) return;
    $('filter').value = $('filter').value === tr.dataset.filter ? '' : tr.dataset.filter;
    applyFilter($('filter').value);
    if (tr.dataset.index !== undefined) showFlow(Number(tr.dataset.index));
  });
  // A mark of the plot, or a frame of the messages table: that frame.
  for (const id of ['plot', 'messages']) {
    $(id).addEventListener('click', (e) => {
      const mark = e.target.closest('[data-frame]');
      if (!mark || !Number(mark.dataset.frame)) return;
      e.preventDefault();
      select(Number(mark.dataset.frame));
    });
  }
  $('tree').addEventListener('click', (e) => {
    const row = e.target.closest('.field');
    if (row) highlight(Number(row.dataset.index));
  });
  $('tree').addEventListener('keydown', (e) => {
    const row = e.target.closest('.field');
    if (row && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      highlight(Number(row.dataset.index));
    }
  });
  $('hex').addEventListener('click', (e) => {
    const b = e.target.closest('.b');
    if (!b || !state.frame) return;
    const k = fieldAt(state.frame.all, Number(b.dataset.i));
    highlight(k);
  });
  document.addEventListener('keydown', (e) => {
    if ((e.target instanceof Element && e.target.matches('input, select, textarea')) || !state.summary) return;
    if (e.key === 'ArrowDown' || e.key === 'j') {
      e.preventDefault();
      move(1);
    } else if (e.key === 'ArrowUp' || e.key === 'k') {
      e.preventDefault();
      move(-1);
    } else if (e.key === 'PageDown' || e.key === 'PageUp') {
      e.preventDefault();
      move((e.key === 'PageDown' ? 1 : -1) * Math.max(1, Math.floor($('list').clientHeight / ROW_H) - 1));
    }
  });
}

async function main() {
  try {
    await init();
  } catch (err) {
    showError(`Could not load the decoder (pkg/rocescope_wasm_bg.wasm): build it with "bash wasm/build.sh" and serve wasm/www over http. ${err}`);
    return;
  }
  for (const d of JSON.parse(fields_registry())) state.registry.set(d.name, d);
  buildParams(JSON.parse(params_table()));
  wire();
  resetView(0);
  const params = new URLSearchParams(location.search);
  presetFromUrl(params);
  if (params.has('flows')) $('flows-pane').open = true;
  if (params.has('capture')) {
    const url = params.get('capture');
    state.timings = { t0: performance.now() };
    let buf;
    try {
      const resp = await fetch(url);
      if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
      buf = await resp.arrayBuffer();
    } catch (err) {
      showError(`${url}: ${err.message}`);
      return;
    }
    await open(buf, url.split('/').pop());
    const n = Number(params.get('frame'));
    if (n && state.summary && n <= state.summary.frames) {
      await select(n);
      const name = params.get('field');
      const k = name ? state.frame.all.findIndex((f) => f.name === name) : -1;
      if (k >= 0) highlight(k);
    }
  }
  document.body.dataset.ready = '1';
}

main();
