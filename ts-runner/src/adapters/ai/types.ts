/**
 * The AI SDK's language-model types, as `ai` exports them: derived from `LanguageModelMiddleware`
 * so that the adapter imports nothing but `ai` itself (`@ai-sdk/provider` is ai's dependency,
 * not ours, and may not be resolvable from here).
 */

import type { LanguageModelMiddleware } from "ai";

type TransformOptions = Parameters<NonNullable<LanguageModelMiddleware["transformParams"]>>[0];
type WrapGenerate = NonNullable<LanguageModelMiddleware["wrapGenerate"]>;
type WrapStream = NonNullable<LanguageModelMiddleware["wrapStream"]>;

/** What the SDK asks the model: prompt, tools and settings (`LanguageModelV4CallOptions`). */
export type CallOptions = TransformOptions["params"];
export type LanguageModel = TransformOptions["model"];
export type Prompt = CallOptions["prompt"];
export type PromptMessage = Prompt[number];
export type CallTool = NonNullable<CallOptions["tools"]>[number];
/** `LanguageModelV4GenerateResult`. */
export type GenerateResult = Awaited<ReturnType<WrapGenerate>>;
export type Content = GenerateResult["content"][number];
export type FinishReason = GenerateResult["finishReason"];
/** `LanguageModelV4StreamResult`. */
export type StreamResult = Awaited<ReturnType<WrapStream>>;
export type StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never;
