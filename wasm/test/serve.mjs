// A static http server for the inspector's browser tests (page_e2e.mjs, page_bench.mjs): the
// page (wasm/www) at /, the fixtures at /fixtures/, files made by the test at /made/NAME (from
// the `made` map), and files named by the test at /file/NAME (from the `files` map: name ->
// path, streamed). Module workers and WebAssembly need http, not file://.
import { createServer } from 'node:http';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };

export async function serve(root, made = new Map(), files = new Map()) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path.startsWith('/file/') && files.has(path.slice(6))) {
      const file = files.get(path.slice(6));
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': statSync(file).size });
      createReadStream(file).pipe(res);
      return;
    }
    let body = null;
    let file = path;
    if (path.startsWith('/made/')) body = made.get(path.slice(6)) ?? null;
    else {
      file = path.startsWith('/fixtures/') ? join(root, path) : join(root, 'wasm/www', path === '/' ? 'index.html' : path);
      try {
        if (statSync(file).isFile()) body = readFileSync(file);
      } catch {
        body = null;
      }
    }
    if (body === null) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { base: `http://127.0.0.1:${server.address().port}`, server };
}
