/**
 * harnessweaver: the hook bus that AI-agent harnesses run unchanged.
 *
 * When a hook point fires (`tool.before`, `model.after`, …) the bus runs every middleware
 * attached to it in a predictable order (four bands, onion direction), combines their answers
 * (most severe wins), enforces each middleware's timeout and fail mode, and records a trace.
 */

export { HookBus, type EmitOptions, type Handler, type HookBusOptions, type RegisterOptions } from "./bus.js";
export { CONTRACT_RULES, checkContract, type ContractMode } from "./contracts.js";
export { DIRECTIONS, HOOK_POINTS, isHookPoint, type Direction, type HookPoint } from "./catalogue.js";
export { RunContext, type RunContextOptions } from "./context.js";
export {
  BANDS,
  FAIL_MODES,
  MODES,
  Declaration,
  declare,
  snakeCase,
  type Band,
  type DeclarationOptions,
  type FailMode,
  type Mode,
  type Overrides,
} from "./declaration.js";
export { parseDuration, type Duration } from "./duration.js";
export { Envelope, FixedClock, SystemClock, type Clock, type EnvelopeOptions } from "./envelope.js";
export {
  DeclarationError,
  EmitError,
  HarnessweaverError,
  RegistrationError,
  TraceFormatError,
  type ErrorKind,
  type Rule,
} from "./errors.js";
export {
  EVENT_TYPES,
  eventFromJSON,
  isEvent,
  Message,
  ModelRequest,
  ModelRequestEvent,
  ModelResponse,
  ModelResponseEvent,
  StepEndEvent,
  StepStartEvent,
  TaskEndEvent,
  TaskStartEvent,
  ToolCall,
  ToolCallEvent,
  ToolResult,
  ToolResultEvent,
  ToolSpec,
  Usage,
  type Event,
  type EventOf,
  type EventTypes,
} from "./events.js";
export { NON_ERROR_THROWN, type FailureKind } from "./failure.js";
export { contentIdentity, type IdentityScheme } from "./identity.js";
export { declareIn, isLayer, LAYERS, type Layer } from "./layer.js";
export { globMatch, MATCH_KEYS, type MatchKey, type Matcher, type MatchOptions } from "./matcher.js";
export { jsonEqual, type JsonObject, type JsonValue, type MutableJson } from "./json.js";
export {
  isMiddleware,
  middleware,
  type Answer,
  type Middleware,
  type MiddlewareFn,
  type MiddlewareObject,
  type MiddlewareOptions,
} from "./middleware.js";
export type { Init, ModelClass, Props } from "./model.js";
export {
  Block,
  Continue,
  Escalate,
  isOutcome,
  outcomeJSON,
  Retry,
  severity,
  Suspend,
  type HookResult,
  type Outcome,
  type OutcomeJSON,
  type OutcomeKind,
  type WarningsOption,
} from "./outcomes.js";
export { FIELDS as TRACE_FIELDS, type RecordKind, type TraceRecord } from "./record.js";
export { MAX_WARNING_CHARS, MAX_WARNINGS, type HookWarning } from "./warnings.js";
export { DEFAULT_BATCH, DEFAULT_LIMIT, jsonlSink, MAX_EMIT, Trace, type TraceOptions, type TraceSink } from "./trace.js";

/** The package version: the Cargo workspace's, copied here by `nox -s version` (docs/packaging.md). */
export const VERSION = "0.1.0";
export { configurable, isConfigurable, Plugin, PluginError, type Configurable, type PluginOptions, type ProfileSource, type SettingsSchema } from "./plugin.js";
// The built-in middleware (namespace harnessweaver) and profiles: docs/builtins.md.
export * as builtins from "./builtins/index.js";
export { builtinPlugin, BUILTIN_PROFILES } from "./builtins/index.js";
// The harness spec loader (docs/harness-spec.md): load("harness.yaml", {task, env}) → Harness.
export { Harness, HarnessEntry, load, type LoadOptions } from "./spec/loader.js";
export { Problem, SpecError } from "./spec/errors.js";
export { Provenance } from "./spec/model.js";
// State a fleet shares (docs/state.md): the store interface, its backends, keys and views.
export * as state from "./state/index.js";
export {
  attach,
  MemoryStore,
  openStore,
  PostgresStore,
  RedisStore,
  SqliteStore,
  stateKey,
  StateUnavailable,
  StateView,
  type Reservation,
  type StateRecord,
  type Store,
} from "./state/index.js";
// Durable approvals (docs/approvals.md): records in the state store, decided anywhere, claimed once.
export * as approvals from "./approvals/index.js";
export {
  actionOf,
  ApprovalRefused,
  Approvals,
  howToDecide,
  HttpNotifier,
  specIdentity,
  verifySignature,
  type ApprovalRecord,
  type Notifier,
  type Verdict,
} from "./approvals/index.js";
