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
// The server backends load their drivers on first use, never at import.
export { RedisStore, type RedisStoreOptions } from "./redis.js";
export { PostgresStore, type PostgresStoreOptions } from "./postgres.js";
export { SqliteStore } from "./sqlite.js";
