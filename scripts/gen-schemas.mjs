#!/usr/bin/env node
// gen-schemas.mjs — writes src/server/schema/models.c, the built-in type schemas of the embedded
// API server, from the generated models of @kubernetes/client-node (installed for the node
// conformance test by scripts/install-deps in tests/conformance/node/node_modules).
//
// Run at development time when the client-node version changes, and commit the output:
//     node scripts/gen-schemas.mjs            (rewrites src/server/schema/models.c)
//     node scripts/gen-schemas.mjs --check    (exit 1 when the committed file is stale)
// The build never runs it, so building needs no npm.
//
// What is taken from the models: each exported model class (all.js; older model files the
// package still carries are not exported and are skipped), and for each of its attributes the
// JSON name (baseName), the type (string, number/int32/int64/double, boolean, Date, IntOrString,
// any, a model, Array<…>, { [key: string]: … }), the format (byte, date-time, date-time-micro)
// and whether it is required (no '?' after the name in the model's .d.ts). Descriptions are not
// taken. The models carry no enums and no x-kubernetes-* list/map types, so the data has none.
//
// One thing the models flatten: resource.Quantity becomes a plain string, but the API server
// decodes a quantity from a JSON number too (`nvidia.com/gpu: 1`). QUANTITY below names the
// fields of type Quantity (Type.field, the type without its version prefix); the generator stops
// with an error when one of them is missing or not a string, so the list cannot go stale quietly.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkgDir = path.join(root, 'tests/conformance/node/node_modules/@kubernetes/client-node');
const modelsDir = path.join(pkgDir, 'dist/gen/models');
const out = path.join(root, 'src/server/schema/models.c');

const QUANTITY = [
    'ResourceRequirements.limits', 'ResourceRequirements.requests',
    'VolumeResourceRequirements.limits', 'VolumeResourceRequirements.requests',
    'LimitRangeItem.default', 'LimitRangeItem.defaultRequest', 'LimitRangeItem.max',
    'LimitRangeItem.maxLimitRequestRatio', 'LimitRangeItem.min',
    'ResourceQuotaSpec.hard', 'ResourceQuotaStatus.hard', 'ResourceQuotaStatus.used',
    'NodeStatus.allocatable', 'NodeStatus.capacity', 'PersistentVolumeSpec.capacity',
    'PersistentVolumeClaimStatus.allocatedResources', 'PersistentVolumeClaimStatus.capacity',
    'ContainerStatus.allocatedResources', 'EmptyDirVolumeSource.sizeLimit', 'PodSpec.overhead',
    'Overhead.podFixed', 'CSIStorageCapacity.capacity', 'CSIStorageCapacity.maximumVolumeSize',
    'MetricTarget.averageValue', 'MetricTarget.value', 'MetricValueStatus.averageValue',
    'MetricValueStatus.value', 'DeviceCapacity.value', 'Counter.value',
];

const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
const models = await import(pathToFileURL(path.join(modelsDir, 'all.js')).href);
const specVersion = (fs.readFileSync(path.join(modelsDir, 'V1Pod.js'), 'utf8')
    .match(/OpenAPI spec version: (\S+)/) || [])[1] || '?';

const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const names = Object.keys(models)
    .filter((k) => typeof models[k] === 'function' && models[k].getAttributeTypeMap)
    .sort(cmp);
const index = new Map(names.map((n, i) => [n, i]));
const typeName = (m) => m.replace(/^[A-Z][a-z]+(?=V\d)/, '').replace(/^V\d+(?:(?:alpha|beta)\d+)?/, '');

// Required attributes: the TypeScript property names declared without '?' in the .d.ts.
function requiredOf(model) {
    const dts = fs.readFileSync(path.join(modelsDir, `${model}.d.ts`), 'utf8');
    const req = new Set();
    for (const m of dts.matchAll(/^\s+'([^']+)'(\?)?:/gm))
        if (!m[2]) req.add(m[1]);
    return req;
}

// A model attribute → [shape, type, ref]
function classify(model, a) {
    let t = a.type, shape = 'SCALAR';
    let m = t.match(/^Array<(.+)>$/);
    if (m) { shape = 'ARRAY'; t = m[1]; }
    m = t.match(/^\{ \[key: string\]: (.+); \}$/);
    if (m) { shape = 'MAP'; t = m[1]; }
    m = shape === 'MAP' && t.match(/^Array<(.+)>$/);
    if (m) { shape = 'MAP_ARRAY'; t = m[1]; }
    const scalar = {
        string: a.format === 'byte' ? 'BYTES' : 'STRING', boolean: 'BOOL', Date: 'TIME',
        V1MicroTime: 'MICROTIME', IntOrString: 'INTORSTR', any: 'ANY',
    };
    if (t === 'number') {
        const f = { int32: 'INT32', int64: 'INT64', double: 'NUMBER' }[a.format];
        if (!f) throw new Error(`${model}.${a.baseName}: number of format '${a.format}'`);
        return [shape, f, -1];
    }
    if (scalar[t]) return [shape, scalar[t], -1];
    if (index.has(t)) return [shape, 'OBJECT', index.get(t)];
    throw new Error(`${model}.${a.baseName}: unknown type '${a.type}'`);
}

const quantity = new Set(QUANTITY), seenQuantity = new Set();
const fields = [], rows = [];
for (const model of names) {
    const req = requiredOf(model);
    const attrs = [...models[model].getAttributeTypeMap()].sort((x, y) => cmp(x.baseName, y.baseName));
    rows.push(`    {"${model}", ${fields.length}, ${attrs.length}},`);
    for (const a of attrs) {
        let [shape, type, ref] = classify(model, a);
        const q = `${typeName(model)}.${a.baseName}`;
        if (quantity.has(q)) {
            if (type !== 'STRING') throw new Error(`${q}: listed as a quantity but is ${type}`);
            type = 'QUANTITY';
            seenQuantity.add(q);
        }
        fields.push(`    {"${a.baseName}", KC__ST_${type}, KC__SH_${shape}, ${req.has(a.name) ? 1 : 0}, ${ref}},`);
    }
}
for (const q of QUANTITY)
    if (!seenQuantity.has(q)) throw new Error(`${q}: listed as a quantity but no model has it`);

const text = `/*
 * models.c — GENERATED by scripts/gen-schemas.mjs from @kubernetes/client-node ${pkg.version}
 * (Kubernetes OpenAPI ${specVersion}); do not edit. ${names.length} models, ${fields.length} fields: names,
 * types, formats and required flags only (schema.h describes the layout).
 */
#include "server/schema/schema.h"

// clang-format off
const kc__smodel kc__smodels[] = {
${rows.join('\n')}
};
const size_t kc__n_smodels = sizeof(kc__smodels) / sizeof(kc__smodels[0]);

const kc__sfield kc__sfields[] = {
${fields.join('\n')}
};
const size_t kc__n_sfields = sizeof(kc__sfields) / sizeof(kc__sfields[0]);
// clang-format on
`;

if (process.argv.includes('--check')) {
    const have = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
    if (have !== text) {
        console.error(`gen-schemas: ${path.relative(root, out)} is stale; run node scripts/gen-schemas.mjs`);
        process.exit(1);
    }
    console.log('gen-schemas: up to date');
} else {
    fs.writeFileSync(out, text);
    console.log(`gen-schemas: wrote ${path.relative(root, out)}: ${names.length} models, ${fields.length} fields`);
}
