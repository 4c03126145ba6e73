import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The backend's domain folders (scripts/domains/map.json) and the arrows between them. A domain reaches another
// only through core/ or that domain's named entry file; the reaches below are today's exceptions (the to-do list:
// move what they use behind the entry, then delete the line), and the domain arrows that close a circle today.
const root = join(__dirname, "..", "..", "..");

interface Domain { entry: string | null; mayImport: string[] }
const map = JSON.parse(readFileSync(join(root, "scripts/domains/map.json"), "utf8")) as { domains: Record<string, Domain> };

// "importer -> imported", paths under convex/. Grouped by what the importer needs from the other domain.
const ALLOWED_REACHES = new Set<string>([]);

// Domain arrows that run back up the layering (queue; then trust, pipelines; then apps; then access, observability,
// webhooks) and so close a circle today. Each goes when the reaches behind it are turned around or go through core/.
const ALLOWED_BACK_ARROWS = new Set([
  "pipelines -> queue",
]);

interface Reach { from: string; to: string }

/** Every relative import (static, `export … from`, dynamic) of every file in a domain folder, as convex/-relative paths. */
function domainImports(domains: string[], read = (path: string) => readFileSync(join(root, "convex", path), "utf8")): Reach[] {
  const reaches: Reach[] = [];
  for (const domain of domains) {
    for (const name of readdirSync(join(root, "convex", domain)).filter((n) => /\.tsx?$/.test(n))) {
      const from = `${domain}/${name}`;
      for (const imported of ts.preProcessFile(read(from), true, true).importedFiles) {
        if (!imported.fileName.startsWith(".")) continue;
        const to = posix.normalize(posix.join(domain, imported.fileName)).replace(/\.js$/, "").replace(/(\.ts)?$/, ".ts");
        reaches.push({ from, to });
      }
    }
  }
  return reaches;
}

const domainOf = (path: string) => path.split("/")[0];
const crossDomain = (reaches: Reach[]) =>
  reaches.filter((r) => domainOf(r.to) in map.domains && domainOf(r.to) !== domainOf(r.from) && domainOf(r.to) !== "core");

function forbiddenReaches(reaches: Reach[]): string[] {
  return crossDomain(reaches)
    .filter((r) => r.to !== `${domainOf(r.to)}/${map.domains[domainOf(r.to)].entry}`)
    .map((r) => `${r.from} -> ${r.to}`)
    .filter((line) => !ALLOWED_REACHES.has(line));
}

function domainArrows(reaches: Reach[]): Set<string> {
  return new Set(crossDomain(reaches).map((r) => `${domainOf(r.from)} -> ${domainOf(r.to)}`));
}

/** The circles among domain folders once the allowed back arrows are left out (strongly connected components). */
function circles(arrows: Set<string>): string[][] {
  const next = new Map<string, string[]>();
  for (const arrow of arrows) {
    if (ALLOWED_BACK_ARROWS.has(arrow)) continue;
    const [a, b] = arrow.split(" -> ");
    next.set(a, [...(next.get(a) ?? []), b]);
  }
  const reachable = (start: string) => {
    const seen = new Set<string>();
    const stack = [...(next.get(start) ?? [])];
    while (stack.length > 0) {
      const d = stack.pop()!;
      if (seen.has(d)) continue;
      seen.add(d);
      stack.push(...(next.get(d) ?? []));
    }
    return seen;
  };
  const domains = Object.keys(map.domains);
  const found = new Map<string, string[]>();
  for (const d of domains) {
    const loop = domains.filter((o) => reachable(d).has(o) && reachable(o).has(d));
    if (loop.length > 0) found.set(loop.sort().join(","), loop);
  }
  return [...found.values()];
}

describe("backend domains", () => {
  const domains = Object.keys(map.domains);
  const reaches = domainImports(domains);

  it("reads the imports of every domain folder", () => {
    expect(crossDomain(reaches).length).toBeGreaterThan(0);
    for (const d of domains) expect(reaches.some((r) => domainOf(r.from) === d), d).toBe(true);
  });

  it("a domain imports another only through core/ or that domain's entry, or an allowed reach", () => {
    expect(forbiddenReaches(reaches)).toEqual([]);
  });

  it("a domain imports only the domains its map entry says it may", () => {
    const outside = [...domainArrows(reaches)].filter((arrow) => {
      const [a, b] = arrow.split(" -> ");
      return !map.domains[a].mayImport.includes(b);
    });
    expect(outside).toEqual([]);
  });

  it("no circle between domain folders beyond the allowed back arrows", () => {
    expect(circles(domainArrows(reaches))).toEqual([]);
  });

  it("the allow-lists name only reaches and arrows that still exist (delete a line once it is fixed)", () => {
    const actual = new Set(crossDomain(reaches).map((r) => `${r.from} -> ${r.to}`));
    expect([...ALLOWED_REACHES].filter((line) => !actual.has(line))).toEqual([]);
    const arrows = domainArrows(reaches);
    expect([...ALLOWED_BACK_ARROWS].filter((arrow) => !arrows.has(arrow))).toEqual([]);
  });

  it("catches a planted reach into another domain's internals and a planted circle", () => {
    const planted = [...reaches, { from: "webhooks/webhooks.ts", to: "queue/lease.ts" }];
    expect(forbiddenReaches(planted)).toEqual(["webhooks/webhooks.ts -> queue/lease.ts"]);
    const circle = [...reaches, { from: "webhooks/webhooks.ts", to: "queue/entry.ts" }];
    expect(forbiddenReaches(circle)).toEqual([]);
    expect(circles(domainArrows(circle))).toEqual([["queue", "webhooks"]]);
  });
});
