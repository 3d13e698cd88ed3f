/**
 * A bench input the command refuses (an events file's bad line, a hook point with nothing to
 * time): its message is printed after `harnessweaver bench: error: ` and the command exits 2.
 */
export class BenchError extends Error {
  override readonly name = "BenchError";
}
