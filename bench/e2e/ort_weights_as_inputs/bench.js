#!/usr/bin/env node
// mlp_b32 on ONNX Runtime with its weights as inputs (convert.py) and, for comparison in the
// same process, as the peers' model has them (initializers). Usage:
//   node bench.js PEERS_RUN DIR THREADS
// Prints the peers' line format: workload<TAB>impl@<T>t<TAB>median_ms (300 runs after 20).
'use strict';
const fs = require('fs');
const path = require('path');
const [peers, dir, threadsArg] = process.argv.slice(2);
const ort = require(path.resolve(peers, 'node', 'node_modules', 'onnxruntime-node'));
const threads = Number(threadsArg || 1);

function readF32(file) {
  const b = fs.readFileSync(file);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

(async () => {
  const shapes = JSON.parse(fs.readFileSync(path.join(dir, 'weights.json')));
  const x = new Float32Array(32 * 784);
  for (let i = 0; i < x.length; i++) x[i] = ((i * 2654435761) % 1000) / 1000 - 0.5;
  for (const [label, model, weightsIn] of [
    ['weights-as-inputs', path.join(dir, 'mlp_b32_weights_in.onnx'), true],
    ['weights-constant', path.join(peers, 'models', 'mlp_b32.onnx'), false]]) {
    for (const opt of ['basic', 'all']) {
      const session = await ort.InferenceSession.create(model, {
        graphOptimizationLevel: opt, intraOpNumThreads: threads, interOpNumThreads: 1,
        executionMode: 'sequential'});
      const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', x, [32, 784])};
      if (weightsIn) {
        for (const [name, shape] of Object.entries(shapes)) {
          feeds[name] = new ort.Tensor('float32', readF32(path.join(dir, `${name}.bin`)), shape);
        }
      }
      for (let i = 0; i < 20; i++) await session.run(feeds);
      const t = [];
      for (let i = 0; i < 300; i++) {
        const t0 = process.hrtime.bigint();
        await session.run(feeds);
        t.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      t.sort((a, b) => a - b);
      console.log(`mlp_b32\tort-cpu(${label},opt=${opt})@${threads}t\t${t[150].toFixed(3)}`);
      await session.release();
    }
  }
})();
