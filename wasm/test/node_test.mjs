// The wasm build under Node (wasm-bindgen --target nodejs, built into wasm/test/pkg by
// `bash wasm/build.sh`): decodes the bundled captures and checks frames and fields.
//
//   node --test wasm/test/node_test.mjs
//
// With ROCESCOPE_WASM_EXPECT_DIR set (wasm/tests/node.rs does), that folder holds the native
// build's decode_capture output for each fixture (FIXTURE.json) and the wasm output must equal
// it byte for byte.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const pkg = process.env.ROCESCOPE_WASM_PKG ?? new URL('./pkg/rocescope_wasm.js', import.meta.url).pathname;
const wasm = require(pkg);
const fixture = (name) => readFileSync(new URL(`../../fixtures/${name}`, import.meta.url));
const decode = (name, options = {}) => JSON.parse(wasm.decode_capture(fixture(name), JSON.stringify(options)));
const field = (frame, name) => frame.fields.filter((f) => f.name === name);
const value = (frame, name) => field(frame, name).map((f) => f.value).join(',');

test('std-mix: every frame, first frame field by field', () => {
  const r = decode('std-mix.pcapng');
  assert.equal(r.error, null);
  assert.equal(r.frames.length, 305);
  assert.deepEqual(r.frames.map((f) => f.number), r.frames.map((_, i) => i + 1));
  const f = r.frames[0];
  assert.equal(f.time_ns, '1700000000000000000');
  assert.equal(f.src, '192.168.77.10');
  assert.equal(f.dst, '192.168.77.20');
  assert.equal(f.protocol, 'RoCEv2');
  assert.equal(f.profile, 'std');
  assert.equal(f.summary, 'RC SEND First QP=0xa50000 PSN=16777215 len=8');
  assert.equal(value(f, 'rocescope.opcode_name'), 'RC SEND First');
  assert.equal(value(f, 'rocescope.bth.psn'), '16777215');
  assert.equal(value(f, 'rocescope.bth.destqp'), '10813440');
  assert.equal(value(f, 'rocescope.bth.p_key'), '37428');
  assert.equal(value(f, 'rocescope.bth.se'), '0');
  assert.equal(value(f, 'rocescope.icrc'), '2400c49e');
  assert.equal(value(f, 'rocescope.icrc.status'), 'good');
  // Byte ranges: Ethernet 14 + IPv4 20 + UDP 8, then the BTH.
  assert.deepEqual(field(f, 'rocescope.bth.opcode').map((x) => [x.start, x.end]), [[42, 43]]);
  assert.deepEqual(field(f, 'rocescope.bth.psn').map((x) => [x.start, x.end]), [[51, 54]]);
  assert.deepEqual(field(f, 'rocescope.icrc').map((x) => [x.start, x.end]), [[62, 66]]);
  // The hex view's bytes: the BTH opcode byte at data_offset + 42 in the file.
  const bytes = fixture('std-mix.pcapng');
  assert.equal(bytes[f.data_offset + 42], 0);
  assert.equal(bytes.subarray(f.data_offset + 62, f.data_offset + 66).toString('hex'), '2400c49e');
  // IPv6 on frame 2.
  assert.equal(r.frames[1].dst, 'fd00:5ce0::14');
  assert.ok(r.flows.length > 0);
  assert.equal(r.stats.frames, 305);
});

test('ext-mix: every profile is detected', () => {
  const r = decode('ext-mix.pcapng');
  assert.equal(r.error, null);
  const profiles = new Set(r.frames.map((f) => f.profile).filter(Boolean));
  assert.deepEqual([...profiles].sort(), ['dcp', 'erd', 'flor', 'netrt', 'sdr', 'std']);
  assert.ok(r.frames.some((f) => f.warnings.length > 0));
  const dcp = r.flows.find((f) => f.id === '10.1.0.1>10.1.0.2/256');
  assert.equal(dcp.profile, 'dcp');
});

test('options re-decode: fixed profile, parameters, count', () => {
  const std = decode('ext-mix.pcapng', { profile: 'std', count: 10 });
  assert.equal(std.frames.length, 10);
  assert.ok(std.frames.every((f) => f.profile === null || f.profile === 'std'));
  const netrt = decode('ext-mix.pcapng', { netrt_opcode: '0xc1' });
  assert.ok(!netrt.frames.some((f) => f.profile === 'netrt'));
  const bad = decode('ext-mix.pcapng', { profile: 'nope' });
  assert.equal(bad.error.offset, null);
  assert.match(bad.error.text, /^options: profile: unknown profile 'nope'/);
});

test('an unusable capture is an error with its byte offset', () => {
  const r = JSON.parse(wasm.decode_capture(Buffer.from('not a capture at all, sorry'), '{}'));
  assert.equal(r.error.offset, 0);
  assert.match(r.error.text, /^byte 0: not a pcap or pcapng file/);
  const all = fixture('std-mix.pcapng');
  const cut = JSON.parse(wasm.decode_capture(all.subarray(0, 1000), ''));
  assert.ok(cut.error.offset > 0);
  assert.ok(cut.frames.length > 0);
});

test('fields registry', () => {
  const reg = JSON.parse(wasm.fields_registry());
  const psn = reg.find((d) => d.name === 'rocescope.bth.psn');
  assert.equal(psn.type, 'uint24');
  assert.equal(psn.desc, 'BTH Packet Sequence Number');
  assert.ok(reg.some((d) => d.name === 'frame.number'));
  // The field tree's groups are the Wireshark plugin's (codec/src/field_group.rs).
  assert.equal(psn.group, 'bth');
  assert.equal(psn.group_label, 'Base Transport Header (BTH)');
  assert.equal(reg.find((d) => d.name === 'rocescope.sdr.ctrl.type').group, 'sdr.ctrl');
  assert.equal(reg.find((d) => d.name === 'rocescope.warning').group, 'frame');
  assert.equal(wasm.version(), JSON.parse(wasm.decode_capture(fixture('std-mix.pcapng'), '{"count":1}')).version);
});

test('params table: the keys the page builds its controls from', () => {
  const table = JSON.parse(wasm.params_table());
  assert.ok(table.length > 0);
  const plain = decode('ext-mix.pcapng', { count: 20 });
  for (const p of table) {
    assert.match(p.flag, /^--[a-z-]+$/);
    assert.ok(p.help.length > 0 && p.title.length > 0, p.name);
    if (p.kind === 'enum') assert.ok(p.values.includes(p.default), p.name);
    else assert.deepEqual(p.values, [], p.name);
    // The default, given as the page gives it, is the default; a bad value names the key.
    const same = decode('ext-mix.pcapng', { count: 20, [p.name]: p.default });
    assert.equal(same.error, null, p.name);
    assert.deepEqual(same.frames, plain.frames, p.name);
    const bad = decode('ext-mix.pcapng', { [p.name]: '0,1' });
    assert.ok(bad.error.text.startsWith(`options: ${p.name}: `), bad.error.text);
  }
});

const expectDir = process.env.ROCESCOPE_WASM_EXPECT_DIR;
test('wasm output equals the native build', { skip: !expectDir && 'ROCESCOPE_WASM_EXPECT_DIR not set' }, () => {
  for (const name of ['std-mix.pcapng', 'ext-mix.pcapng']) {
    const want = join(expectDir, `${name}.json`);
    assert.ok(existsSync(want), want);
    const got = wasm.decode_capture(fixture(name), '{}');
    assert.ok(got === readFileSync(want, 'utf8'), `${name}: wasm and native decode_capture differ`);
  }
});
