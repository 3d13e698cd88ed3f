/**
 * State a fleet shares: the store interface under every stateful middleware
 * (python/harnessweaver/state; docs/state.md). The Redis, PostgreSQL and SQLite backends load
 * their drivers on first use (`ioredis`, `pg`, `node:sqlite`): importing this loads none.
 */

export { attach, isStateful, stateful, StateSlot, stateSlot, type AttachOptions } from "./attach.js";
export { CONFIG_KEYS, openStore, parseConfig, StateConfig, StateConfigError, type ParseOptions } from "./config.js";
export { MemoryStore, type MemoryStoreOptions } from "./memory.js";
export { LookupError, quote, SCOPES, isScope, stateKey, subjectOf, type Scope } from "./scope.js";
export {
  BACKENDS,
  MARK_TTL,
  StateUnavailable,
  type Backend,
  type CommitOptions,
  type Reservation,
  type ReserveOptions,
  type StateRecord,
  type Store,
  type SwapOptions,
} from "./store.js";
export { DEFAULT_LAYER, DEFAULT_TIMEOUT, StateView, UNAVAILABLE, type StateViewOptions } from "./view.js";
export type { RedisStore, RedisStoreOptions } from "./redis.js";
export type { PostgresStore, PostgresStoreOptions } from "./postgres.js";
export type { SqliteStore } from "./sqlite.js";
