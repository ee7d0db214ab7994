// informer.mjs KUBECONFIG URL — @kubernetes/client-node 1.4.0 makeInformer against `kcache serve`
// started with --watch-close-every 2, so the server ends the watch stream every 2 events.
// Checks: the initial list gives add; later creates/updates/deletes give add/update/delete in
// order; the informer recovers from every closed watch (#99) with no lost or duplicated event
// and no error callback; after a forced compaction the resumed watch gets 410 and the informer
// relists (#100); its cache equals a fresh list at the end. Exit 1 on any failure.
import * as k8s from '@kubernetes/client-node';

const [kcfgPath, url] = process.argv.slice(2);
const NS = 'nodeconf';
let passed = 0, failed = 0;
const pass = (m) => { passed++; console.log('PASS: ' + m); };
const fail = (m, e) => { failed++; console.log('FAIL: ' + m + (e ? '\n    ' + e : '')); };

const kc = new k8s.KubeConfig();
kc.loadFromFile(kcfgPath);
const core = kc.makeApiClient(k8s.CoreV1Api);

const events = [];
const errors = [];
let waiters = [];
function notify() { waiters = waiters.filter((w) => !w()); }
// Resolve when pred() holds, re-checked on every informer event; reject after ms.
function until(pred, ms, what) {
  return new Promise((resolve, reject) => {
    if (pred()) return resolve();
    const t = setTimeout(() => reject(new Error('timeout waiting for ' + what +
      '; events: ' + JSON.stringify(events))), ms);
    waiters.push(() => { if (pred()) { clearTimeout(t); resolve(); return true; } return false; });
  });
}
async function admin(method, path, body) {
  const r = await fetch(url + path, { method, body: body ? JSON.stringify(body) : undefined,
    headers: { 'Content-Type': 'application/json' } });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status}`);
}
const cm = (name, v) => ({ metadata: { name, namespace: NS }, data: { v } });
const seen = (type, name) => events.some((e) => e[0] === type && e[1] === name);

async function main() {
  await core.createNamespace({ body: { metadata: { name: NS } } });
  await core.createNamespacedConfigMap({ namespace: NS, body: cm('pre', '0') });
  const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`,
    () => core.listNamespacedConfigMap({ namespace: NS }));
  let connects = 0;
  informer.on('add', (o) => { events.push(['add', o.metadata.name, o.data.v]); notify(); });
  informer.on('update', (o) => { events.push(['update', o.metadata.name, o.data.v]); notify(); });
  informer.on('delete', (o) => { events.push(['delete', o.metadata.name]); notify(); });
  informer.on('connect', () => { connects++; notify(); });
  informer.on('error', (e) => { errors.push(String(e)); notify(); });
  await informer.start();

  try {
    await until(() => seen('add', 'pre'), 10000, 'initial add');
    pass('initial list: add for the existing object');
  } catch (e) { fail('initial list: add for the existing object', e); }

  try {
    for (let i = 0; i < 5; i++)
      await core.createNamespacedConfigMap({ namespace: NS, body: cm('c' + i, '0') });
    await until(() => [0, 1, 2, 3, 4].every((i) => seen('add', 'c' + i)), 15000, 'adds');
    const order = events.filter((e) => e[0] === 'add' && e[1] !== 'pre').map((e) => e[1]);
    if (order.join() !== 'c0,c1,c2,c3,c4') throw new Error('order ' + order.join());
    pass('creates arrive as add, in order');
  } catch (e) { fail('creates arrive as add, in order', e); }

  try {
    const cur = await core.readNamespacedConfigMap({ name: 'c1', namespace: NS });
    cur.data.v = '1';
    await core.replaceNamespacedConfigMap({ name: 'c1', namespace: NS, body: cur });
    await until(() => events.some((e) => e[0] === 'update' && e[1] === 'c1' && e[2] === '1'),
      15000, 'update');
    pass('replace arrives as update with the new data');
  } catch (e) { fail('replace arrives as update with the new data', e); }

  try {
    await core.deleteNamespacedConfigMap({ name: 'c2', namespace: NS });
    await until(() => seen('delete', 'c2'), 15000, 'delete');
    pass('delete arrives as delete');
  } catch (e) { fail('delete arrives as delete', e); }

  try {
    // 8 writes: the server closes the stream every 2 events, so the informer must re-watch ≥ 3 times.
    for (let i = 5; i < 13; i++)
      await core.createNamespacedConfigMap({ namespace: NS, body: cm('c' + i, '0') });
    await until(() => seen('add', 'c12'), 20000, 'adds after closes');
    const adds = events.filter((e) => e[0] === 'add').map((e) => e[1]);
    const dup = adds.filter((n, i) => adds.indexOf(n) !== i);
    if (dup.length) throw new Error('duplicate adds ' + dup.join());
    if (connects < 4) throw new Error('only ' + connects + ' (re)connects: stream was not closed');
    if (errors.length) throw new Error('error callback: ' + errors.join('; '));
    pass(`recovers from closed watches (${connects} connects), no loss, no duplicate, no error`);
  } catch (e) { fail('recovers from closed watches', e); }

  try {
    // Force the 410 path (#100): hold events, write, compact, then let one event through and
    // close the stream after it: the re-watch from that event's RV is expired, so the informer
    // must relist (and still see x2).
    const before = connects;
    await admin('PUT', '/admin/faults', { watchStall: true });
    await core.createNamespacedConfigMap({ namespace: NS, body: cm('x1', '0') });
    await core.createNamespacedConfigMap({ namespace: NS, body: cm('x2', '0') });
    await admin('POST', '/admin/compact');
    await admin('PUT', '/admin/faults', { watchStall: false, watchCloseEvery: 1 });
    await until(() => seen('add', 'x1') && seen('add', 'x2') && connects >= before + 2, 20000,
      'relist after 410');
    await admin('PUT', '/admin/faults', { watchCloseEvery: 2 });
    if (errors.length) throw new Error('error callback: ' + errors.join('; '));
    pass('after compaction a resumed watch gets 410 and the informer relists (#100)');
  } catch (e) { fail('after compaction the informer relists (#100)', e); }

  try {
    const list = await core.listNamespacedConfigMap({ namespace: NS });
    const want = list.items.map((o) => o.metadata.name + '@' + o.metadata.resourceVersion).sort();
    await until(() => informer.list(NS).length === want.length, 10000, 'cache size');
    const have = informer.list(NS).map((o) => o.metadata.name + '@' + o.metadata.resourceVersion).sort();
    if (have.join() !== want.join()) throw new Error('cache ' + have.join() + ' != list ' + want.join());
    pass('informer cache equals a fresh list');
  } catch (e) { fail('informer cache equals a fresh list', e); }

  await informer.stop();
  console.log(`== ${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

setTimeout(() => { console.log('FAIL: overall timeout'); process.exit(1); }, 90000).unref();
main().catch((e) => { console.log('FAIL: ' + (e && e.stack ? e.stack : e)); process.exit(1); });
