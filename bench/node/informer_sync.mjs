// informer_sync.mjs KUBECONFIG N — time @kubernetes/client-node 1.4.0 makeInformer's initial sync
// of N Pods (all namespaces) against the server bench_informer started, and its memory.
// listFn pages with limit=500 (as client-go's pager does): one unpaged LIST of 100k 6 KB Pods
// would exceed V8's maximum string length.
// Prints: RESULT <wall seconds> <peak KiB above baseline> <steady KiB above baseline>
// Run with NODE_PATH=tests/conformance/node/node_modules (where the package is installed).
import { createRequire } from 'module';
import * as fs from 'fs';
const require = createRequire(process.env.NODE_PATH ? process.env.NODE_PATH + '/' : import.meta.url);
const k8s = require('@kubernetes/client-node');

const [kcfgPath, nStr] = process.argv.slice(2);
const N = parseInt(nStr, 10);
const kb = (field) => {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp('^' + field + ':\\s+(\\d+)', 'm'));
  return m ? parseInt(m[1], 10) : -1;
};

const kc = new k8s.KubeConfig();
kc.loadFromFile(kcfgPath);
const core = kc.makeApiClient(k8s.CoreV1Api);

async function listAll() {
  let items = [], cont, last;
  do {
    last = await core.listPodForAllNamespaces({ limit: 500, _continue: cont });
    items = items.concat(last.items);
    cont = last.metadata && last.metadata._continue;
  } while (cont);
  last.items = items;
  return last;
}

async function main() {
  if (global.gc) global.gc();
  const base = kb('VmRSS');
  fs.writeFileSync('/proc/self/clear_refs', '5');
  const t0 = process.hrtime.bigint();
  const informer = k8s.makeInformer(kc, '/api/v1/pods', listAll);
  informer.on('error', (e) => { console.error('informer error: ' + e); });
  await informer.start();
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const got = informer.list().length;
  const peak = kb('VmHWM') - base;
  if (global.gc) global.gc();
  const steady = kb('VmRSS') - base;
  await informer.stop();
  if (got !== N) { console.error(`node informer has ${got} objects, expected ${N}`); process.exit(1); }
  console.log(`RESULT ${wall.toFixed(3)} ${peak} ${steady}`);
  process.exit(0);
}
main().catch((e) => { console.error(e); process.exit(1); });
