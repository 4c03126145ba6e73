import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The backend's domain folders (scripts/domains/map.json, listed bottom to top) and the arrows between them. A domain
// imports only domains below it (its mayImport), and another domain only through core/ or that domain's entry file.
const root = join(__dirname, "..", "..", "..");

interface Domain { entry: string | null; mayImport: string[]; files: string[] }
const map = JSON.parse(readFileSync(join(root, "scripts/domains/map.json"), "utf8")) as { domains: Record<string, Domain> };
const layers = Object.keys(map.domains);

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
const crossDomain = (reaches: Reach[]) => reaches.filter((r) => domainOf(r.to) in map.domains && domainOf(r.to) !== domainOf(r.from));

/** Reaches into another domain's internals: not its entry file (any file of core/ is its surface). */
function forbiddenReaches(reaches: Reach[]): string[] {
  return crossDomain(reaches)
    .filter((r) => domainOf(r.to) !== "core" && r.to !== `${domainOf(r.to)}/${map.domains[domainOf(r.to)].entry}`)
    .map((r) => `${r.from} -> ${r.to}`);
}

function domainArrows(reaches: Reach[]): Set<string> {
  return new Set(crossDomain(reaches).map((r) => `${domainOf(r.from)} -> ${domainOf(r.to)}`));
}

/** Arrows that do not run down the layering: to a domain not in the importer's mayImport, or not listed below it. */
function upwardArrows(arrows: Set<string>, domains: Record<string, Domain> = map.domains): string[] {
  const order = Object.keys(domains);
  return [...arrows].filter((arrow) => {
    const [a, b] = arrow.split(" -> ");
    return !domains[a].mayImport.includes(b) || order.indexOf(b) >= order.indexOf(a);
  });
}

/** mayImport entries that name a domain not below the importer (which is what keeps the map free of circles). */
function mapUpward(domains: Record<string, Domain>): string[] {
  const order = Object.keys(domains);
  return order.flatMap((a) => domains[a].mayImport.filter((b) => !(b in domains) || order.indexOf(b) >= order.indexOf(a)).map((b) => `${a} -> ${b}`));
}

describe("backend domains", () => {
  const reaches = domainImports(layers);

  it("reads the imports of every domain folder", () => {
    expect(crossDomain(reaches).length).toBeGreaterThan(0);
    for (const d of layers) expect(reaches.some((r) => domainOf(r.from) === d), d).toBe(true);
  });

  it("the map lists each domain's modules exactly (docs/ARCHITECTURE.md sends readers to it)", () => {
    for (const [domain, { files }] of Object.entries(map.domains)) {
      const modules = readdirSync(join(root, "convex", domain)).filter((n) => /\.tsx?$/.test(n));
      expect([...files].sort(), domain).toEqual(modules.sort());
    }
  });

  it("a domain imports another only through core/ or that domain's entry file", () => {
    expect(forbiddenReaches(reaches)).toEqual([]);
  });

  it("the map's layering is acyclic: each domain may import only domains listed below it", () => {
    expect(layers[0]).toBe("core");
    expect(map.domains.core.mayImport).toEqual([]);
    expect(mapUpward(map.domains)).toEqual([]);
  });

  it("every import between domains runs down the layering", () => {
    expect(upwardArrows(domainArrows(reaches))).toEqual([]);
  });

  it("an entry file exports only what other domains import of it", () => {
    for (const d of layers.filter((l) => map.domains[l].entry !== null)) {
      const entry = `${d}/${map.domains[d].entry}`;
      expect(crossDomain(reaches).some((r) => r.to === entry), `${entry} is imported by another domain`).toBe(true);
    }
  });

  it("catches a planted reach into another domain's internals, a planted upward import and an upward map", () => {
    const planted = [...reaches, { from: "webhooks/webhooks.ts", to: "queue/lease.ts" }];
    expect(forbiddenReaches(planted)).toEqual(["webhooks/webhooks.ts -> queue/lease.ts"]);
    const upward = [...reaches, { from: "lanes/kick.ts", to: "trust/entry.ts" }];
    expect(forbiddenReaches(upward)).toEqual([]);
    expect(upwardArrows(domainArrows(upward))).toEqual(["lanes -> trust"]);
    const circle = { ...map.domains, lanes: { ...map.domains.lanes, mayImport: [...map.domains.lanes.mayImport, "trust"] } };
    expect(mapUpward(circle)).toEqual(["lanes -> trust"]);
    expect(upwardArrows(domainArrows(upward), circle)).toEqual(["lanes -> trust"]);
  });
});
