/** The mixed-capability queue and the eight clients both designs are measured with. */
export const CLIENTS: Array<{ name: string; capabilities: string[] }> = [
  { name: "cpu-1", capabilities: ["cpu"] },
  { name: "cpu-2", capabilities: ["cpu"] },
  { name: "cpu-3", capabilities: ["cpu"] },
  { name: "cpu-4", capabilities: ["cpu"] },
  { name: "cpu-gpu-1", capabilities: ["cpu", "gpu"] },
  { name: "cpu-gpu-2", capabilities: ["cpu", "gpu"] },
  { name: "gpu-llm", capabilities: ["gpu", "ollama:llama3"] },
  { name: "cpu-cuda", capabilities: ["cpu", "cuda"] },
];

/** Shares of the queue by required capabilities; no client offers "ollama:mixtral" (a model nobody pulled). */
const MIX: Array<[number, string[]]> = [
  [0.3, ["cpu"]],
  [0.2, []],
  [0.15, ["gpu"]],
  [0.1, ["cuda"]],
  [0.1, ["ollama:llama3"]],
  [0.05, ["cpu", "gpu"]],
  [0.1, ["ollama:mixtral"]],
];

/** `depth` capability sets in queue order, from a seeded generator (the same queue for both designs). */
export function mixedQueue(depth: number, seed: number): string[][] {
  let state = seed >>> 0;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
  return Array.from({ length: depth }, () => {
    let roll = random();
    for (const [share, capabilities] of MIX) {
      if (roll < share) return capabilities;
      roll -= share;
    }
    return MIX[0][1];
  });
}
