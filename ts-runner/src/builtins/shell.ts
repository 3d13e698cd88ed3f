/**
 * `harnessweaver.shell_guard`: destructive shell commands never run
 * (python/harnessweaver/builtins/shell.py, which says what each rule covers and why).
 *
 * A call of a shell tool (`tools`) has its command (the `arguments` it names; a list of words
 * is joined with spaces) checked against the built-in rules of `RULES` that `rules` names,
 * then against the user's `patterns` (Python's dialect, `pyregex.ts`); the first that matches
 * blocks the call with code `shell_command_denied` and a reason naming the tool and the rule,
 * never the command. `RULES` mirrors Python's table rule for rule, in the same order; the
 * corpus (conformance/cases/harness/builtins-guards.json) keeps the two the same.
 */

import type { ToolCallEvent } from "../events.js";
import { Block } from "../outcomes.js";
import { configurable } from "../plugin.js";
import { patternProblem } from "./patterns.js";
import { compilePython } from "./pyregex.js";
import { pythonRepr } from "./repr.js";
import { SettingsError, settingsSchema } from "./settings.js";
import { basename, scan, type Command, type Scanned } from "./shellwords.js";

/**
 * A command longer than this (in characters: code points, as Python counts) is refused unread:
 * twice what Linux lets one argument of a program be, and a user's pattern that backtracks
 * cannot be made to run for long.
 */
export const MAX_COMMAND = 262_144;

interface Settings {
  readonly protected: ReadonlySet<string>;
}

/** A rule: whether the scanned command breaks it. */
export type Rule = (scanned: Scanned, settings: Settings) => boolean;

function* eachCommand(scanned: Scanned): Generator<Command> {
  for (const pipeline of scanned.pipelines) yield* pipeline;
}

/**
 * The arguments of each time a command names `program` (`/bin/rm` too): the words after it, up
 * to where it is named again. (Up to there, not to the command's end: then each word is read
 * once, and `rm rm rm … -rf /` cannot make a rule quadratic.)
 */
function invocations(scanned: Scanned, program: string): Command[] {
  const found: Command[] = [];
  for (const command of eachCommand(scanned)) {
    let start = -1;
    for (let at = 0; at < command.length; at++) {
      if (basename(command[at] as string) !== program) continue;
      if (start >= 0) found.push(command.slice(start, at));
      start = at + 1;
    }
    if (start >= 0) found.push(command.slice(start));
  }
  return found;
}

/** The letters of a short-option cluster (`-rf` → `rf`), or `""`. */
function short(word: string): string {
  return word.length > 1 && word[0] === "-" && word[1] !== "-" ? word.slice(1) : "";
}

/** `text` without the trailing `chars` (Python's `rstrip`; a loop: a regex could backtrack). */
function rstrip(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return text.slice(0, end);
}

const DANGEROUS = new Set(["/", "~", "*", ".", "..", ".*", "$HOME", "${HOME}"]);

/** `/`, a folder of the root (`/etc`), the home folder, or everything here. */
function dangerousTarget(word: string): boolean {
  let target = word.endsWith("/*") ? word.slice(0, -2) : word;
  target = rstrip(target, "/") || "/";
  if (DANGEROUS.has(target)) return true;
  if (target.startsWith("~")) return !target.includes("/");
  return target.startsWith("/") && !target.slice(1).includes("/");
}

function rmRecursiveForce(scanned: Scanned): boolean {
  for (const args of invocations(scanned, "rm")) {
    let recursive = false;
    let force = false;
    let dangerous = false;
    let noRoot = false;
    let options = true;
    for (const arg of args) {
      const letters = options ? short(arg) : "";
      if (options && arg === "--") options = false;
      else if (letters) {
        recursive ||= letters.includes("r") || letters.includes("R");
        force ||= letters.includes("f");
      } else if (options && arg.startsWith("--")) {
        recursive ||= arg === "--recursive";
        force ||= arg === "--force";
        noRoot ||= arg === "--no-preserve-root";
      } else dangerous ||= dangerousTarget(arg);
    }
    if (recursive && force && (dangerous || noRoot)) return true;
  }
  return false;
}

const DOWNLOADERS = new Set(["curl", "wget"]);
const INTERPRETERS = new Set(["sh", "bash", "zsh", "dash", "ksh", "fish", "perl", "ruby", "node", "python", "python3"]);
const WRAPPERS = new Set(["sudo", "doas", "env", "nohup", "time", "nice", "command", "exec", "builtin", "stdbuf"]);

/** The program a command runs: past `sudo`, `env X=1` and the like. */
function program(command: Command): string {
  for (const word of command) {
    const name = basename(word);
    if (WRAPPERS.has(name) || word.startsWith("-") || (word.includes("=") && !word.startsWith("="))) continue;
    return name;
  }
  return "";
}

function curlPipeShell(scanned: Scanned): boolean {
  for (const pipeline of scanned.pipelines) {
    let downloaded = false;
    for (const command of pipeline) {
      if (downloaded && INTERPRETERS.has(program(command))) return true;
      downloaded ||= command.some((word) => DOWNLOADERS.has(basename(word)));
    }
  }
  return false;
}

/** An octal mode with the others' write bit, or a symbolic one giving `o`/`a` write. */
function worldWritable(mode: string): boolean {
  if ((mode.length === 3 || mode.length === 4) && [...mode].every((c) => "01234567".includes(c))) return "2367".includes(mode[mode.length - 1] as string);
  for (const clause of mode.split(",")) {
    let who = 0;
    while (who < clause.length && "ugoa".includes(clause[who] as string)) who++;
    const rest = clause.slice(who);
    const granted = (rest.startsWith("+") || rest.startsWith("=")) && rest.includes("w");
    const whom = clause.slice(0, who);
    if (granted && (who === 0 || whom.includes("a") || whom.includes("o"))) return true;
  }
  return false;
}

function chmodRecursive777(scanned: Scanned): boolean {
  for (const args of invocations(scanned, "chmod")) {
    const recursive = args.some((a) => short(a).includes("R") || a === "--recursive");
    if (recursive && args.some((a) => !a.startsWith("-") && worldWritable(a))) return true;
  }
  return false;
}

const GIT_OPTIONS_WITH_VALUE = new Set(["-C", "-c", "--git-dir", "--work-tree", "--namespace"]);
const PUSH_OPTIONS_WITH_VALUE = new Set(["-o", "--push-option", "--repo", "--receive-pack", "--exec"]);

/** Whether `git push ARGS` force-updates a protected branch, or one it cannot name. */
function pushedToProtected(args: Command, protectedBranches: ReadonlySet<string>): boolean {
  let force = false;
  let every = false;
  const positional: string[] = [];
  let skip = false;
  for (let at = 0; at < args.length; at++) {
    const arg = args[at] as string;
    if (skip) skip = false;
    else if (arg === "--") {
      for (const rest of args.slice(at + 1)) positional.push(rest);
      break;
    } else if (arg.startsWith("--")) {
      const equals = arg.indexOf("=");
      const name = equals < 0 ? arg : arg.slice(0, equals);
      force ||= name === "--force" || name === "--force-with-lease" || name === "--mirror";
      every ||= name === "--all" || name === "--branches" || name === "--mirror";
      skip = PUSH_OPTIONS_WITH_VALUE.has(arg);
    } else if (short(arg)) {
      force ||= short(arg).includes("f");
      skip = PUSH_OPTIONS_WITH_VALUE.has(arg);
    } else positional.push(arg);
  }
  const refspecs = positional.slice(1); // the first is the remote
  if (every || refspecs.length === 0) return force; // every branch, or the current one: it may be a protected one
  for (const refspec of refspecs) {
    if (!(force || refspec.startsWith("+"))) continue;
    const spec = refspec.startsWith("+") ? refspec.slice(1) : refspec;
    const colon = spec.indexOf(":");
    let target = colon < 0 ? spec : spec.slice(colon + 1);
    if (target.startsWith("refs/heads/")) target = target.slice("refs/heads/".length);
    if (protectedBranches.has(target) || target === "" || target === "HEAD" || target === "@") return true;
  }
  return false;
}

function gitForcePush(scanned: Scanned, settings: Settings): boolean {
  for (const args of invocations(scanned, "git")) {
    let skip = false;
    for (let at = 0; at < args.length; at++) {
      const arg = args[at] as string;
      if (skip) skip = false;
      else if (arg.startsWith("-")) skip = GIT_OPTIONS_WITH_VALUE.has(arg);
      else {
        // the subcommand
        if (arg === "push" && pushedToProtected(args.slice(at + 1), settings.protected)) return true;
        break;
      }
    }
  }
  return false;
}

function makesFileSystem(program: string): boolean {
  return program === "mkfs" || program === "mke2fs" || program.startsWith("mkfs.");
}

function mkfs(scanned: Scanned): boolean {
  for (const command of eachCommand(scanned)) {
    if (command.some((word) => makesFileSystem(basename(word)))) return true;
  }
  return false;
}

const HARMLESS_DEVICES = new Set(["null", "zero", "stdout", "stderr", "tty"]);

function ddToDevice(scanned: Scanned): boolean {
  for (const args of invocations(scanned, "dd")) {
    for (const arg of args) {
      if (!arg.startsWith("of=/dev/")) continue;
      const device = arg.slice("of=/dev/".length);
      if (!(HARMLESS_DEVICES.has(device) || device.startsWith("fd/"))) return true;
    }
  }
  return false;
}

const NOT_IN_NAMES = "(){}|&;<>'\"`$";

/** `NAME(){ NAME|NAME& }`: a function that starts two of itself (blanks ignored). */
function forkBomb(scanned: Scanned): boolean {
  const text = scanned.text.replace(/[ \t\r\f\v\n]/g, "");
  let at = text.indexOf("(){");
  while (at >= 0) {
    let start = at;
    while (start > 0 && !NOT_IN_NAMES.includes(text[start - 1] as string)) start--; // never past the previous "(){"
    const name = text.slice(start, at);
    if (name && text.startsWith(`${name}|${name}&`, at + 3)) return true;
    at = text.indexOf("(){", at + 3);
  }
  return false;
}

/** The built-in rules, in the order they are tried (Python's `RULES`, rule for rule). */
export const RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ["rm_recursive_force", rmRecursiveForce],
  ["curl_pipe_shell", curlPipeShell],
  ["chmod_recursive_777", chmodRecursive777],
  ["git_force_push", gitForcePush],
  ["mkfs", mkfs],
  ["dd_to_device", ddToDevice],
  ["fork_bomb", forkBomb],
]);

interface PatternItem {
  readonly name: string;
  readonly pattern: string;
}

/** The user's patterns, checked as Python's validator checks them (the schema has checked their shape). */
function userPatterns(settings: Readonly<Record<string, unknown>>): [string, RegExp][] {
  const items = (settings["patterns"] ?? []) as readonly PatternItem[];
  const rules = (settings["rules"] ?? [...RULES.keys()]) as readonly string[];
  if (new Set(rules).size !== rules.length) throw new SettingsError("rules", "a rule is named twice");
  for (const item of items) {
    // the loader reports only unknown keys of the settings themselves, not of an item in a list
    const keys = Object.keys(item).sort();
    if (keys.length !== 2 || keys[0] !== "name" || keys[1] !== "pattern") throw new SettingsError("patterns", "a pattern is {name, pattern}");
    if (RULES.has(item.name)) throw new SettingsError("patterns", `the pattern name ${pythonRepr(item.name)} is a built-in rule's`);
    const problem = patternProblem(item.pattern);
    if (problem !== null) throw new SettingsError("patterns", problem);
  }
  if (new Set(items.map((item) => item.name)).size !== items.length) throw new SettingsError("patterns", "a pattern name is given twice");
  if (items.length === 0 && rules.length === 0) throw new SettingsError("patterns", "no rules and no patterns: the guard would check nothing");
  // not global: test() from the start each time, as Python's search()
  return items.map((item) => [item.name, compilePython(item.pattern, "")]);
}

/** The command an argument holds: a string, or a list of strings joined with spaces. */
function commandText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value.join(" ");
  return null;
}

/** Whether `text` has more than `limit` code points (Python's `len`), counting no further. */
function longer(text: string, limit: number): boolean {
  if (text.length <= limit) return false; // never fewer UTF-16 units than code points
  let count = 0;
  for (const _ of text) if (++count > limit) return true;
  return false;
}

export const shellGuard = configurable(
  { name: "shell_guard", hooks: ["tool.before"], failMode: "closed", settings: settingsSchema("shell_guard") },
  (given) => {
    const patterns = userPatterns(given);
    const tools = new Set(given["tools"] as readonly string[]);
    const argumentsToRead = given["arguments"] as readonly string[];
    const enabled = new Set(given["rules"] as readonly string[]);
    const rules = [...RULES].filter(([name]) => enabled.has(name));
    const settings: Settings = { protected: new Set(given["protected_branches"] as readonly string[]) };
    const deniedBy = (text: string): string | null => {
      const scanned = scan(text);
      for (const [name, rule] of rules) if (rule(scanned, settings)) return name;
      for (const [name, pattern] of patterns) if (pattern.test(text)) return name;
      return null;
    };
    return async (event: ToolCallEvent) => {
      const tool = event.tool.name;
      if (!tools.has(tool)) return null;
      const args = event.call.arguments as Readonly<Record<string, unknown>>;
      for (const argument of argumentsToRead) {
        if (!Object.hasOwn(args, argument)) continue;
        const text = commandText(args[argument]);
        let reason: string;
        if (text === null) reason = `tool ${pythonRepr(tool)}: argument ${pythonRepr(argument)} is not a string or a list of strings`;
        else if (longer(text, MAX_COMMAND)) reason = `tool ${pythonRepr(tool)}: command is longer than ${MAX_COMMAND} characters`;
        else {
          const rule = deniedBy(text);
          if (rule === null) continue;
          reason = `tool ${pythonRepr(tool)}: command matches rule ${pythonRepr(rule)}`;
        }
        return Block(reason, { code: "shell_command_denied" });
      }
      return null;
    };
  },
);
