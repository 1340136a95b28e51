#!/usr/bin/env node
// Run an ONNX model with ONNX Runtime (onnxruntime-node, CPU) on .npy inputs.
//
// usage: node scripts/ort/run.mjs MODEL.onnx --input NAME=FILE.npy ...
//            [--output-dir DIR] [--time N] [--threads N] [--create-only]
//
//   --input NAME=FILE.npy  one per graph input (all graph inputs are required)
//   --output-dir DIR       write every output as DIR/<output name>.npy; each
//                          character outside [A-Za-z0-9._-] becomes '_'
//   --time N               run N times and report the median (default 1 run)
//   --threads N            use N threads (intraOpNumThreads and
//                          interOpNumThreads); --threads 1 measures
//                          single-thread latency. Default: ORT's own choice
//                          (one intra-op thread per core)
//   --create-only          only create the session (no inputs needed), for
//                          measuring session creation time
//
// The session uses the CPU execution provider with graphOptimizationLevel
// 'all'. On success prints one JSON line to stdout, e.g.
//   {"session_create_ms":12.3,"run_ms_median":4.5,"run_ms_min":4.4,"runs":1,
//    "outputs":["logits"]}
// On any error prints one line "run.mjs: error: ..." to stderr and exits 1.
//
// .npy support (format versions 1.0/2.0/3.0, little-endian, C order):
// float32, float64, float16, int64, int32, int16, int8, uint8, uint16, bool.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);

class UsageError extends Error {}

function fail(msg) {
  process.stderr.write(`run.mjs: error: ${String(msg).replace(/\s*\n\s*/g, ' ').trim()}\n`);
  process.exit(1);
}

// ---------------------------------------------------------------- .npy I/O

// numpy descr (without byte-order char) <-> ORT tensor type / typed array.
const NPY_TYPES = {
  f4: { ort: 'float32', Array: Float32Array },
  f8: { ort: 'float64', Array: Float64Array },
  f2: { ort: 'float16', Array: Uint16Array },
  i8: { ort: 'int64', Array: BigInt64Array },
  i4: { ort: 'int32', Array: Int32Array },
  i2: { ort: 'int16', Array: Int16Array },
  i1: { ort: 'int8', Array: Int8Array },
  u1: { ort: 'uint8', Array: Uint8Array },
  u2: { ort: 'uint16', Array: Uint16Array },
  b1: { ort: 'bool', Array: Uint8Array },
};
const ORT_TO_DESCR = Object.fromEntries(
  Object.entries(NPY_TYPES).map(([k, v]) => [v.ort, (v.Array.BYTES_PER_ELEMENT === 1 ? '|' : '<') + k]));

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

function readNpy(file) {
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    throw new Error(`cannot read ${file}: ${e.message}`);
  }
  if (buf.length < 10 || !buf.subarray(0, 6).equals(MAGIC)) throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  let headerLen, headerStart;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    headerStart = 10;
  } else if (major === 2 || major === 3) {
    headerLen = buf.readUInt32LE(8);
    headerStart = 12;
  } else {
    throw new Error(`${file}: unsupported .npy version ${major}.${buf[7]}`);
  }
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', headerStart, headerStart + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new Error(`${file}: malformed .npy header: ${header.trim()}`);
  if (fortran[1] === 'True') throw new Error(`${file}: Fortran-order arrays are not supported`);
  const order = descr[1][0];
  const kind = descr[1].slice(1);
  const t = NPY_TYPES[kind];
  if (!t || !'<|='.includes(order) || (order === '|' && t.Array.BYTES_PER_ELEMENT !== 1)) {
    throw new Error(`${file}: unsupported dtype '${descr[1]}'`);
  }
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`${file}: bad shape (${shape[1]})`);
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLen;
  const nbytes = count * t.Array.BYTES_PER_ELEMENT;
  if (buf.length - dataStart < nbytes) {
    throw new Error(`${file}: truncated (${buf.length - dataStart} data bytes, need ${nbytes})`);
  }
  // Copy into a fresh, aligned ArrayBuffer.
  const ab = new ArrayBuffer(nbytes);
  new Uint8Array(ab).set(buf.subarray(dataStart, dataStart + nbytes));
  return { type: t.ort, data: new t.Array(ab), dims };
}

function writeNpy(file, type, data, dims) {
  const descr = ORT_TO_DESCR[type];
  if (!descr) throw new Error(`cannot write output of type ${type} to .npy`);
  const shapeStr = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeStr}, }`;
  // Pad so that magic(6)+version(2)+len(2)+header is a multiple of 64, ending in '\n'.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - 10 - header.length - 1) + '\n';
  const pre = Buffer.alloc(10);
  MAGIC.copy(pre, 0);
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  let body;
  if (type === 'bool' && !(data instanceof Uint8Array)) {
    body = Buffer.from(Uint8Array.from(data, (v) => (v ? 1 : 0)));
  } else {
    body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

// ---------------------------------------------------------------- main

function parseArgs(argv) {
  const a = { model: null, inputs: [], outputDir: null, time: 1, threads: null, createOnly: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${arg} needs a value`);
      return argv[++i];
    };
    if (arg === '--input') {
      const v = next();
      const eq = v.indexOf('=');
      if (eq <= 0) throw new UsageError(`--input expects NAME=FILE.npy, got '${v}'`);
      a.inputs.push([v.slice(0, eq), v.slice(eq + 1)]);
    } else if (arg === '--output-dir') {
      a.outputDir = next();
    } else if (arg === '--time') {
      const v = next();
      a.time = Number(v);
      if (!Number.isInteger(a.time) || a.time < 1) throw new UsageError(`--time expects a positive integer, got '${v}'`);
    } else if (arg === '--threads') {
      const v = next();
      a.threads = Number(v);
      if (!Number.isInteger(a.threads) || a.threads < 1) {
        throw new UsageError(`--threads expects a positive integer, got '${v}'`);
      }
    } else if (arg === '--create-only') {
      a.createOnly = true;
    } else if (arg === '-h' || arg === '--help') {
      process.stdout.write(
        'usage: node scripts/ort/run.mjs MODEL.onnx --input NAME=FILE.npy ... ' +
          '[--output-dir DIR] [--time N] [--threads N] [--create-only]\n');
      process.exit(0);
    } else if (arg.startsWith('-')) {
      throw new UsageError(`unknown option ${arg}`);
    } else if (a.model === null) {
      a.model = arg;
    } else {
      throw new UsageError(`unexpected argument '${arg}'`);
    }
  }
  if (a.model === null) throw new UsageError('missing MODEL.onnx');
  return a;
}

function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const round = (x) => Math.round(x * 1000) / 1000;

// As loom's rt::sanitizeFileName: a leading '.' becomes '_' too (no hidden
// files, no '..'), and an empty name is '_'.
function sanitize(name) {
  return (name || '_').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\./, '_');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.model)) throw new Error(`model not found: ${args.model}`);

  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    throw new Error(`cannot load onnxruntime-node (run scripts/setup.sh): ${e.message}`);
  }

  // Read inputs before timing the session so file I/O is not counted.
  const feeds = {};
  for (const [name, file] of args.inputs) {
    if (name in feeds) throw new Error(`input '${name}' given twice`);
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }

  // logSeverityLevel 3: errors only, so ORT's warnings do not clutter stderr.
  const opts = { executionProviders: ['cpu'], graphOptimizationLevel: 'all', logSeverityLevel: 3 };
  if (args.threads !== null) {
    opts.intraOpNumThreads = args.threads;
    opts.interOpNumThreads = args.threads;
    opts.executionMode = 'sequential';
  }
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(args.model, opts);
  const createMs = performance.now() - t0;

  const report = { session_create_ms: round(createMs) };
  if (args.threads !== null) report.threads = args.threads;
  if (args.createOnly) {
    process.stdout.write(JSON.stringify(report) + '\n');
    return;
  }

  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length) {
    throw new Error(`missing --input for: ${missing.join(', ')} (model inputs: ${session.inputNames.join(', ')})`);
  }
  const extra = Object.keys(feeds).filter((n) => !session.inputNames.includes(n));
  if (extra.length) {
    throw new Error(`unknown input(s): ${extra.join(', ')} (model inputs: ${session.inputNames.join(', ')})`);
  }

  const times = [];
  let results;
  for (let i = 0; i < args.time; i++) {
    const t1 = performance.now();
    results = await session.run(feeds);
    times.push(performance.now() - t1);
  }

  if (args.outputDir !== null) {
    fs.mkdirSync(args.outputDir, { recursive: true });
    const seen = new Map();
    for (const name of session.outputNames) {
      const fname = sanitize(name);
      if (seen.has(fname)) throw new Error(`outputs '${seen.get(fname)}' and '${name}' both map to ${fname}.npy`);
      seen.set(fname, name);
      const t = results[name];
      writeNpy(path.join(args.outputDir, fname + '.npy'), t.type, t.data, t.dims);
    }
  }

  report.run_ms_median = round(median(times));
  report.run_ms_min = round(Math.min(...times));
  report.runs = times.length;
  report.outputs = session.outputNames;
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => {
  if (e instanceof UsageError) {
    fail(`${e.message} (usage: node scripts/ort/run.mjs MODEL.onnx --input NAME=FILE.npy ... ` +
      '[--output-dir DIR] [--time N] [--threads N] [--create-only])');
  }
  fail(e && e.message ? e.message : e);
});
