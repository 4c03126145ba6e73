import { describeError, type DescribedError } from "./errors";
import type { FarmClient, ReportedFacts } from "./farmClient";

/**
 * The same client, telling `onRefused` whenever the farm refuses its key (an unknown or revoked worker key), on any
 * call or subscription. The worker stops itself on such an error; its owner learns why from the code, not its text.
 */
export function watchKeyRefusals(client: FarmClient, onRefused: (error: DescribedError) => void): FarmClient {
  const check = (e: unknown) => {
    const described = describeError(e);
    if (described.kind === "refused") onRefused(described);
  };
  const checked =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      call(...args).catch((e: unknown) => {
        check(e);
        throw e;
      });
  return {
    doorbell: (onValue, onError) => client.doorbell(onValue, (e) => (check(e), onError(e))),
    claim: checked((capabilities: string[], max: number) => client.claim(capabilities, max)),
    ready: checked((capabilities: string[], slots: number, stopping?: boolean) => client.ready(capabilities, slots, stopping)),
    presence: checked(() => client.presence()),
    heartbeat: checked((leaseId: string, progress?: number, status?: string, suspended?: boolean) =>
      client.heartbeat(leaseId, progress, status, suspended),
    ),
    output: checked((leaseId: string, chunk: string) => client.output(leaseId, chunk)),
    ...(client.checkpoint ? { checkpoint: checked((leaseId: string, data: string) => client.checkpoint!(leaseId, data)) } : {}),
    ...(client.inputs ? { inputs: checked((leaseId: string, cursor: string | null) => client.inputs!(leaseId, cursor)) } : {}),
    complete: checked((leaseId: string, result: unknown, slots?: number, cpuMs?: number) => client.complete(leaseId, result, slots, cpuMs)),
    fail: checked((leaseId: string, error: string, retryable: boolean, slots?: number, cpuMs?: number) =>
      client.fail(leaseId, error, retryable, slots, cpuMs),
    ),
    release: checked((leaseId: string, slots?: number) => client.release(leaseId, slots)),
    ...(client.reportFacts ? { reportFacts: checked((facts: ReportedFacts) => client.reportFacts!(facts)) } : {}),
    ...(client.onConnectionChange ? { onConnectionChange: (cb: (connected: boolean) => void) => client.onConnectionChange!(cb) } : {}),
  };
}
