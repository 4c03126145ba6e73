// The indexes of every table, read from the app's schema: which fields make up each index key, and which
// fields of a document any index can see (all a read or write set needs to keep of a document).
import type { AnySchema } from "../modules";
import type { Value } from "convex/values";
import type { IndexKey, KeyValue } from "./valueOrder";

/** The fields of a document that some index of its table uses, plus _id and _creationTime. */
export type Projection = Readonly<Record<string, Value>>;

const systemIndexes: Record<string, string[]> = {
  by_creation_time: ["_creationTime", "_id"],
  by_id: ["_id"],
};

type TableIndexes = { keys: Map<string, string[]>; projected: string[] };

function fieldAt(document: Readonly<Record<string, unknown>>, fieldPath: string): KeyValue {
  let value: unknown = document;
  for (const part of fieldPath.split(".")) {
    value = value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value as KeyValue;
}

export class IndexCatalog {
  private readonly tables = new Map<string, TableIndexes>();

  static fromSchema(schema: AnySchema | undefined): IndexCatalog {
    const catalog = new IndexCatalog();
    for (const [table, definition] of Object.entries(schema?.tables ?? {})) {
      const exported = (definition as unknown as { export(): { indexes: Array<{ indexDescriptor: string; fields: string[] }> } }).export();
      catalog.declare(table, exported.indexes.map((index) => ({ name: index.indexDescriptor, fields: index.fields })));
    }
    return catalog;
  }

  declare(table: string, indexes: Array<{ name: string; fields: string[] }>): void {
    const keys = new Map<string, string[]>();
    const projected = new Set(["_id", "_creationTime"]);
    for (const index of indexes) {
      keys.set(index.name, [...index.fields, "_creationTime", "_id"]);
      for (const field of index.fields) projected.add(field.split(".")[0]);
    }
    this.tables.set(table, { keys, projected: [...projected] });
  }

  /** The fields of an index key (the index's own fields, then _creationTime and _id); undefined when unknown. */
  keyFields(table: string, index: string): string[] | undefined {
    return systemIndexes[index] ?? this.tables.get(table)?.keys.get(index);
  }

  project(table: string, document: Record<string, Value>): Projection {
    const fields = this.tables.get(table)?.projected ?? ["_id", "_creationTime"];
    const projection: Record<string, Value> = {};
    for (const field of fields) if (field in document) projection[field] = document[field];
    return projection;
  }

}

/** A document's key in an index with these key fields (see IndexCatalog.keyFields). */
export function keyOf(document: Readonly<Record<string, unknown>>, keyFields: readonly string[]): IndexKey {
  return keyFields.map((field) => fieldAt(document, field));
}
