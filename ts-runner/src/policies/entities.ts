/**
 * The entities as the schema types them: cedar-wasm reads entities at each call, so the
 * reading a schema implies (extension values, entity references, the actions and their
 * groups) is done once, at load, and the calls get entities that need no schema.
 */

import type { CedarWasm, Namespace, SchemaType } from "./wasm.js";

/** The extension types and the constructor that reads each from its text (`ipaddr` is made by `ip`). */
const EXTENSIONS: ReadonlyMap<string, string> = new Map([
  ["decimal", "decimal"],
  ["ipaddr", "ip"],
  ["datetime", "datetime"],
  ["duration", "duration"],
]);

/**
 * The schema's actions as entities, each with the action groups it is in (`memberOf`): what
 * Cedar adds to entities read with a schema, so `action in Action::"group"` holds.
 */
function actionEntities(namespaces: Readonly<Record<string, Namespace>>, given: readonly unknown[]): unknown[] {
  const seen = new Set(
    given.map((entity) => {
      const uid = (entity as { uid?: { type?: unknown; id?: unknown; __entity?: { type?: unknown; id?: unknown } } } | null)?.uid;
      const found = uid?.__entity ?? uid;
      return `${String(found?.type)}\0${String(found?.id)}`;
    }),
  );
  const out: unknown[] = [];
  for (const [space, namespace] of Object.entries(namespaces)) {
    const type = space === "" ? "Action" : `${space}::Action`;
    for (const [id, action] of Object.entries(namespace.actions ?? {})) {
      if (seen.has(`${type}\0${id}`)) continue;
      const parents = (action.memberOf ?? []).map((parent) => ({ type: parent.type ?? type, id: parent.id }));
      out.push({ uid: { type, id }, attrs: {}, parents });
    }
  }
  return out;
}

/**
 * `entities` with the values the schema types written out as Cedar's JSON escapes (an
 * extension's text as `{"__extn": ...}`, an entity's `{type, id}` as `{"__entity": ...}`).
 * Python's engine reads the entities with the schema once, at load; cedar-wasm reads them at
 * each call and would need the schema then, which also types the context by the action and
 * refuses an action the schema does not declare: so the reading the schema implies is done
 * here, once, and the calls get entities that need no schema.
 */
export function typedEntities(cedar: CedarWasm, schema: unknown, entities: unknown): unknown {
  const text = typeof schema === "string" ? schema : cedar.schemaToText(schema);
  const source = typeof text === "string" ? text : text.type === "success" ? text.text : null;
  const resolved = source === null ? null : cedar.schemaToJsonWithResolvedTypes(source);
  if (resolved === null || resolved.type !== "success" || !Array.isArray(entities)) return entities;
  const namespaces = resolved.json;
  const split = (name: string): [string, string] => {
    const at = name.lastIndexOf("::");
    return at < 0 ? ["", name] : [name.slice(0, at), name.slice(at + 2)];
  };
  const common = (name: string, here: string): SchemaType | undefined => {
    const [space, local] = name.includes("::") ? split(name) : [here, name];
    return namespaces[space]?.commonTypes?.[local] ?? (name.includes("::") ? undefined : namespaces[""]?.commonTypes?.[name]);
  };
  const typed = (value: unknown, type: SchemaType | undefined, here: string, depth: number): unknown => {
    if (type === undefined || depth > 64 || value === null || typeof value !== "object" && typeof value !== "string") return value;
    const kind = type.type.startsWith("__cedar::") ? type.type.slice("__cedar::".length) : type.type;
    if (kind === "Extension" || EXTENSIONS.has(kind)) {
      const name = kind === "Extension" ? (type.name ?? "") : kind;
      const fn = EXTENSIONS.get(name.startsWith("__cedar::") ? name.slice("__cedar::".length) : name) ?? name;
      return typeof value === "string" ? { __extn: { fn, arg: value } } : value;
    }
    if (kind === "Entity" || kind === "EntityOrCommon") {
      if (typeof value !== "object" || Array.isArray(value) || "__entity" in value || "__extn" in value) return value;
      return { __entity: value };
    }
    if (kind === "Set") return Array.isArray(value) ? value.map((item: unknown) => typed(item, type.element, here, depth + 1)) : value;
    if (kind === "Record") {
      if (typeof value !== "object" || Array.isArray(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(out, key, { value: typed(item, type.attributes?.[key], here, depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    if (["String", "Long", "Boolean", "Bool"].includes(kind)) return value;
    return typed(value, common(kind, here), here, depth + 1);
  };
  const typedList = entities.map((entity: unknown) => {
    if (typeof entity !== "object" || entity === null) return entity;
    const record = entity as { uid?: { type?: unknown; __entity?: { type?: unknown } }; attrs?: unknown };
    const uidType = record.uid?.__entity?.type ?? record.uid?.type;
    if (typeof uidType !== "string") return entity;
    const [space, local] = split(uidType);
    const shape = namespaces[space]?.entityTypes?.[local]?.shape;
    return shape === undefined ? entity : { ...record, attrs: typed(record.attrs ?? {}, shape, space, 0) };
  });
  return [...typedList, ...actionEntities(namespaces, entities)];
}
