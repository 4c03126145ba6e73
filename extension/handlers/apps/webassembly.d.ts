// The part of the WebAssembly JS API the app sandbox uses. Node has it at runtime; @types/node 20 does not
// declare it (it lives in TypeScript's DOM library, which this Node project does not load).
declare namespace WebAssembly {
  type ImportExportKind = "function" | "table" | "memory" | "global" | "tag";
  interface ModuleImportDescriptor {
    module: string;
    name: string;
    kind: ImportExportKind;
  }
  interface ModuleExportDescriptor {
    name: string;
    kind: ImportExportKind;
  }
  type ImportValue = unknown;
  type Imports = Record<string, Record<string, ImportValue>>;

  class Module {
    constructor(bytes: BufferSource);
    static imports(module: Module): ModuleImportDescriptor[];
    static exports(module: Module): ModuleExportDescriptor[];
  }
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Record<string, unknown>;
  }
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  class CompileError extends Error {}
  class LinkError extends Error {}
  class RuntimeError extends Error {}
  function compile(bytes: BufferSource): Promise<Module>;
  function validate(bytes: BufferSource): boolean;
}
