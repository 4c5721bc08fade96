// rocescope inspector: lays out what the Rust decoder (pkg/, built by wasm/build.sh) returns.
// All decoding, value formatting and summaries are Rust's (wasm/src/lib.rs); this file only
// draws the packet list, the field tree and the hex view, and turns the inputs into options.
//
// URL parameters (for links and headless screenshots): ?capture=URL loads a capture,
// &frame=N selects a frame, &field=NAME selects a field, &flows=1 opens the flow table,
// &profile=…, &maps=…, and any parameter key (dcp_tag_shift=3 …) presets an option.

import init, { decode_capture, fields_registry, params_table } from './pkg/rocescope_wasm.js';

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

const state = {
  bytes: null, // the capture file (Uint8Array)
  name: '',
  result: null, // decode_capture's answer
  registry: new Map(), // field name -> { type, desc, values, repeated }
  selected: null, // selected frame (object from result.frames)
  field: null, // selected field index in the selected frame
  hexSpans: [], // per byte of the selected frame: [hex span, ascii span]
};

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

// The options object for decode_capture: what differs from the defaults.
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
  for (const input of $('params').elements) {
    if (input.name && params.has(input.name)) {
      input.value = params.get(input.name);
      $('params').hidden = false;
    }
  }
}

// ---- decoding -----------------------------------------------------------------------------

function decode() {
  if (!state.bytes) return;
  const keep = state.selected?.number;
  const t0 = performance.now();
  state.result = JSON.parse(decode_capture(state.bytes, JSON.stringify(options())));
  const ms = performance.now() - t0;
  renderStatus(ms);
  renderPackets();
  renderFlows();
  const again = state.result.frames.find((f) => f.number === keep) ?? null;
  select(again ?? state.result.frames[0] ?? null, again ? state.field : null);
}

function load(bytes, name) {
  state.bytes = bytes;
  state.name = name;
  state.selected = null;
  state.field = null;
  $('filename').textContent = `${name} — ${bytes.length.toLocaleString()} bytes`;
  $('filename').title = $('filename').textContent;
  $('filename').classList.remove('muted');
  decode();
}

// ---- status -------------------------------------------------------------------------------

function renderStatus(ms) {
  const r = state.result;
  const s = $('status');
  s.replaceChildren();
  s.className = '';
  if (r.error) {
    s.className = 'error';
    const where = r.error.offset === null ? '' : ` (frames after byte ${r.error.offset} are not shown)`;
    s.append(el('span', {}, `${state.name}: ${r.error.text}${r.frames.length ? where : ''}`));
    if (r.error.offset === null) return;
  }
  const per = Object.entries(r.stats.packets).filter(([, n]) => n > 0).map(([p, n]) => `${p} ${n}`).join(' · ');
  const warned = r.frames.filter((f) => f.warnings.length).length;
  const parts = [
    `${r.stats.frames} frames`,
    `${r.stats.roce} RoCE${per ? ` (${per})` : ''}`,
    `${r.flows.length} flows`,
  ];
  if (warned) parts.push(`${warned} with warnings`);
  if (r.stats.flows_unsure) {
    parts.push(`auto: ${r.stats.packets_unsure} packets in ${r.stats.flows_unsure} flows could not be classified (decoded as std)`);
  }
  parts.push(`decoded in ${ms.toFixed(0)} ms`);
  s.append(el('span', { class: r.error ? 'after-error' : '' }, (r.error ? ' — ' : '') + parts.join(' · ')));
}

// ---- packet list --------------------------------------------------------------------------

function relTime(frame) {
  const t0 = BigInt(state.result.frames[0].time_ns);
  const d = BigInt(frame.time_ns) - t0;
  const neg = d < 0n;
  const a = neg ? -d : d;
  return `${neg ? '-' : ''}${a / 1_000_000_000n}.${(a % 1_000_000_000n).toString().padStart(9, '0')}`;
}

function absTime(frame) {
  const t = BigInt(frame.time_ns);
  const ms = Number(t / 1_000_000n);
  const frac = (t % 1_000_000_000n).toString().padStart(9, '0');
  return `${new Date(ms).toISOString().replace(/\.\d+Z$/, '')}.${frac}Z (${frame.time_ns} ns)`;
}

// The flow id (SRC>DST/DESTQP, as in the flow table of rocescope-analysis) of a RoCE frame.
function flowId(f) {
  const qp = f.fields.find((x) => x.name === 'rocescope.bth.destqp');
  return f.src && qp ? `${f.src}>${f.dst}/${qp.value}` : '';
}

function lineText(f) {
  return `${f.number} ${f.src ?? ''} ${f.dst ?? ''} ${f.protocol} ${f.profile ?? ''} ${f.summary} ${f.warnings.join(' ')} ${
    flowId(f)}`.toLowerCase();
}

function renderPackets() {
  const tbody = $('packets').querySelector('tbody');
  const frag = document.createDocumentFragment();
  for (const f of state.result.frames) {
    const info = el('td', { class: 'info' }, f.summary);
    for (const w of f.warnings) info.append(' ', el('span', { class: 'warning' }, w));
    const tr = el(
      'tr',
      { dataset: { number: f.number }, class: f.warnings.length ? 'warn' : f.profile ? '' : 'other' },
      el('td', { class: 'num' }, String(f.number)),
      el('td', { class: 'num', title: absTime(f) }, relTime(f)),
      el('td', { class: 'addr' }, f.src ? `${f.src} → ${f.dst}` : '—'),
      el('td', {}, f.protocol),
      el('td', {}, f.profile ? el('span', { class: `profile p-${f.profile}` }, f.profile) : ''),
      info,
    );
    tr.dataset.text = lineText(f);
    tr.dataset.flow = flowId(f).toLowerCase();
    frag.append(tr);
  }
  tbody.replaceChildren(frag);
  $('empty').hidden = state.result.frames.length > 0;
  $('packets').hidden = state.result.frames.length === 0;
  applyFilter();
}

// Frames whose line contains the text; a flow id (SRC>DST/DESTQP) matches that flow exactly.
function applyFilter() {
  const q = $('filter').value.trim().toLowerCase();
  const flow = /^\S+>\S+\/\d+$/.test(q);
  for (const tr of $('packets').querySelector('tbody').rows) {
    tr.hidden = q !== '' && (flow ? tr.dataset.flow !== q : !tr.dataset.text.includes(q));
  }
}

function rowOf(frame) {
  return $('packets').querySelector(`tbody tr[data-number="${frame.number}"]`);
}

// ---- flows --------------------------------------------------------------------------------

function renderFlows() {
  const tbody = $('flows').querySelector('tbody');
  tbody.replaceChildren(
    ...state.result.flows.map((fl) =>
      el(
        'tr',
        { title: 'Show only this flow', dataset: { id: fl.id } },
        el('td', { class: 'addr' }, fl.id),
        el('td', {}, el('span', { class: `profile p-${fl.profile}` }, fl.profile)),
        el('td', { class: 'num' }, fl.packets.toLocaleString()),
        el('td', { class: 'num' }, fl.bytes.toLocaleString()),
        el('td', { class: 'num' }, `${fl.first_frame}–${fl.last_frame}`),
      ),
    ),
  );
  $('flow-count').textContent = `(${state.result.flows.length})`;
}

// ---- field tree ---------------------------------------------------------------------------

// The subtree of a field and its short name, from the registry (codec/src/field_group.rs, the
// table the Wireshark plugin groups by): "rocescope.sdr.ctrl.type" -> ["sdr.ctrl", "type"].
function groupOf(name) {
  const def = state.registry.get(name);
  return [def ? def.group : 'frame', name.split('.').pop()];
}

function groupLabel(group, items) {
  const def = state.registry.get(items[0][0].name);
  return (def && def.group_label) || group.toUpperCase();
}

function tooltip(field) {
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
  frame.fields.forEach((f, i) => {
    const [g, short] = groupOf(f.name);
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push([f, short, i]);
  });
  const nodes = [head];
  if (frame.fields.length === 0) {
    nodes.push(el('p', { class: 'placeholder' },
      frame.cap_len === 0 ? 'Link type not decoded by rocescope.' : 'Not RoCE: no rocescope fields.'));
  }
  // Headers in wire order (the walk gives extension headers after the IBTA ones); the frame's
  // own values first.
  const wireStart = (g, items) => {
    if (g === 'frame') return -1;
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
        dataset: { index: i },
      }, el('span', { class: 'fname' }, short), ': ', el('span', { class: 'fvalue' }, f.value));
      det.append(row);
    }
    nodes.push(det);
  }
  tree.replaceChildren(...nodes);
}

// ---- hex view -----------------------------------------------------------------------------

function renderHex(frame) {
  const hex = $('hex');
  state.hexSpans = [];
  if (!frame) {
    hex.replaceChildren();
    return;
  }
  const data = state.bytes.subarray(frame.data_offset, frame.data_offset + frame.cap_len);
  const rows = [];
  for (let off = 0; off < data.length; off += 16) {
    const h = el('span', { class: 'hexbytes' });
    const a = el('span', { class: 'ascii' });
    for (let i = off; i < Math.min(off + 16, data.length); i++) {
      const b = data[i];
      if (i > off) h.append(i - off === 8 ? '  ' : ' ');
      const hb = el('span', { class: 'b', dataset: { i } }, b.toString(16).padStart(2, '0'));
      const ab = el('span', { class: 'b', dataset: { i } }, b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '·');
      h.append(hb);
      a.append(ab);
      state.hexSpans.push([hb, ab]);
    }
    rows.push(el('div', { class: 'hexrow' }, el('span', { class: 'off' }, off.toString(16).padStart(4, '0')), h, a));
  }
  if (data.length < frame.len) {
    rows.push(el('div', { class: 'muted' }, `… ${frame.len - data.length} bytes not captured`));
  }
  hex.replaceChildren(...rows);
}

function highlight(frame, index) {
  for (const e of $('hex').querySelectorAll('.b.hl')) e.classList.remove('hl');
  for (const e of $('tree').querySelectorAll('.field.selected')) e.classList.remove('selected');
  state.field = index;
  if (index === null || !frame) return;
  const f = frame.fields[index];
  const row = $('tree').querySelector(`.field[data-index="${index}"]`);
  row?.classList.add('selected');
  row?.scrollIntoView({ block: 'nearest' });
  for (let i = f.start; i < Math.min(f.end, state.hexSpans.length); i++) {
    for (const e of state.hexSpans[i]) e.classList.add('hl');
  }
  state.hexSpans[f.start]?.[0].scrollIntoView({ block: 'nearest' });
}

// The field with the smallest byte range that covers byte i.
function fieldAt(frame, i) {
  let best = null;
  frame.fields.forEach((f, k) => {
    if (f.start <= i && i < f.end && (best === null || f.end - f.start < frame.fields[best].end - frame.fields[best].start)) best = k;
  });
  return best;
}

// ---- selection ----------------------------------------------------------------------------

function select(frame, fieldIndex = null) {
  for (const tr of $('packets').querySelectorAll('tbody tr.selected')) tr.classList.remove('selected');
  state.selected = frame;
  if (frame) {
    const tr = rowOf(frame);
    tr?.classList.add('selected');
    tr?.scrollIntoView({ block: 'nearest' });
  }
  renderTree(frame);
  renderHex(frame);
  highlight(frame, fieldIndex !== null && frame && fieldIndex < frame.fields.length ? fieldIndex : null);
}

function move(step) {
  const rows = [...$('packets').querySelector('tbody').rows].filter((r) => !r.hidden);
  if (!rows.length) return;
  const at = state.selected ? rows.findIndex((r) => Number(r.dataset.number) === state.selected.number) : -1;
  const next = rows[Math.max(0, Math.min(rows.length - 1, at + step))];
  select(state.result.frames.find((f) => f.number === Number(next.dataset.number)));
}

// ---- wiring -------------------------------------------------------------------------------

function wire() {
  $('file').addEventListener('change', async (e) => {
    const file = e.target.files[0];
    if (file) load(new Uint8Array(await file.arrayBuffer()), file.name);
  });
  document.addEventListener('dragover', (e) => {
    e.preventDefault();
    document.body.classList.add('dragging');
  });
  document.addEventListener('dragleave', (e) => {
    if (e.relatedTarget === null) document.body.classList.remove('dragging');
  });
  document.addEventListener('drop', async (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    const file = e.dataTransfer.files[0];
    if (file) load(new Uint8Array(await file.arrayBuffer()), file.name);
  });

  let timer = 0;
  const redecode = () => {
    clearTimeout(timer);
    timer = setTimeout(decode, 250);
  };
  $('profile').addEventListener('change', decode);
  $('maps').addEventListener('input', redecode);
  $('params').addEventListener('input', redecode);
  $('params').addEventListener('reset', () => setTimeout(decode, 0));
  $('params').addEventListener('submit', (e) => {
    e.preventDefault();
    decode();
  });
  $('params-toggle').addEventListener('click', () => {
    const p = $('params');
    p.hidden = !p.hidden;
    $('params-toggle').setAttribute('aria-expanded', String(!p.hidden));
  });
  $('filter').addEventListener('input', applyFilter);

  $('packets').querySelector('tbody').addEventListener('click', (e) => {
    const tr = e.target.closest('tr');
    if (tr) select(state.result.frames.find((f) => f.number === Number(tr.dataset.number)));
  });
  $('flows').querySelector('tbody').addEventListener('click', (e) => {
    const tr = e.target.closest('tr');
    if (!tr) return;
    $('filter').value = $('filter').value === tr.dataset.id ? '' : tr.dataset.id;
    applyFilter();
  });
  $('tree').addEventListener('click', (e) => {
    const row = e.target.closest('.field');
    if (row) highlight(state.selected, Number(row.dataset.index));
  });
  $('tree').addEventListener('keydown', (e) => {
    const row = e.target.closest('.field');
    if (row && (e.key === 'Enter' || e.key === ' ')) {
      e.preventDefault();
      highlight(state.selected, Number(row.dataset.index));
    }
  });
  $('hex').addEventListener('click', (e) => {
    const b = e.target.closest('.b');
    if (!b || !state.selected) return;
    const k = fieldAt(state.selected, Number(b.dataset.i));
    highlight(state.selected, k);
    if (k !== null) $('tree').querySelector(`.field[data-index="${k}"]`)?.scrollIntoView({ block: 'nearest' });
  });
  document.addEventListener('keydown', (e) => {
    if ((e.target instanceof Element && e.target.matches('input, select, textarea')) || !state.result) return;
    if (e.key === 'ArrowDown' || e.key === 'j') {
      e.preventDefault();
      move(1);
    } else if (e.key === 'ArrowUp' || e.key === 'k') {
      e.preventDefault();
      move(-1);
    }
  });
}

async function main() {
  try {
    await init();
  } catch (err) {
    $('status').className = 'error';
    $('status').textContent = `Could not load the decoder (pkg/rocescope_wasm_bg.wasm): build it with "bash wasm/build.sh" and serve wasm/www over http. ${err}`;
    return;
  }
  for (const d of JSON.parse(fields_registry())) state.registry.set(d.name, d);
  buildParams(JSON.parse(params_table()));
  wire();
  const params = new URLSearchParams(location.search);
  presetFromUrl(params);
  if (params.has('flows')) $('flows-pane').open = true;
  if (params.has('capture')) {
    const url = params.get('capture');
    try {
      const resp = await fetch(url);
      if (!resp.ok) throw new Error(`HTTP ${resp.status}`);
      load(new Uint8Array(await resp.arrayBuffer()), url.split('/').pop());
    } catch (err) {
      $('status').className = 'error';
      $('status').textContent = `${url}: ${err.message}`;
      return;
    }
    const n = Number(params.get('frame'));
    const frame = state.result.frames.find((f) => f.number === n);
    if (frame) {
      const name = params.get('field');
      const k = name ? frame.fields.findIndex((f) => f.name === name) : -1;
      select(frame, k >= 0 ? k : null);
    }
  }
}

main();
