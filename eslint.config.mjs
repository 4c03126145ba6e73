// ESLint: typescript-eslint's type-checked recommended rules over every TypeScript file. Run by `npm run lint` and
// by the unit layer (test/unit/tooling/lint.test.ts), which fails listing any finding.
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "dist-test/**",
      "node_modules/**",
      "test/harness/node_modules/**",
      "test/artifacts/**",
      "**/_generated/**",
      "**/*.js",
      "**/*.mjs",
      "**/*.cjs",
    ],
  },
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ ...config, files: ["**/*.ts"] })),
  {
    files: ["**/*.ts"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  // The house's floors: the engine, policy, handlers and CLI run without VS Code; the backend never reaches into the
  // extension; clients reach the backend only through its generated `api` and its contract (convex/contract.ts).
  {
    files: ["extension/worker/**/*.ts", "extension/policy/**/*.ts", "extension/handlers/**/*.ts", "extension/cli/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: [{ name: "vscode", message: "this floor runs without VS Code" }], patterns: [{ group: ["**/convex/core/*", "**/convex/queue/*", "**/convex/trust/*", "**/convex/pipelines/*", "**/convex/apps/*", "**/convex/access/*", "**/convex/webhooks/*", "**/convex/observability/*"], message: "import what the backend shares from convex/contract" }] }] },
  },
  {
    files: ["extension/**/*.ts", "media/**/*.ts", "media/**/*.tsx"],
    ignores: ["extension/worker/**", "extension/policy/**", "extension/handlers/**", "extension/cli/**"],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group: ["**/convex/core/*", "**/convex/queue/*", "**/convex/trust/*", "**/convex/pipelines/*", "**/convex/apps/*", "**/convex/access/*", "**/convex/webhooks/*", "**/convex/observability/*"], message: "import what the backend shares from convex/contract" }] }] },
  },
  // Views only format: they ask the donor's session (extension/donor/), never the farm or a handler themselves.
  {
    files: ["extension/views/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "convex/browser", message: "views call the farm through extension/donor/" }],
        patterns: [
          { group: ["**/convex/core/*", "**/convex/queue/*", "**/convex/trust/*", "**/convex/pipelines/*", "**/convex/apps/*", "**/convex/access/*", "**/convex/webhooks/*", "**/convex/observability/*"], message: "import what the backend shares from convex/contract" },
          { group: ["**/convex/_generated/api"], message: "views call the farm through extension/donor/" },
          { group: ["**/handlers", "**/handlers/*"], message: "views reach handlers (and Ollama) through extension/donor/" },
        ],
      }],
    },
  },
  {
    files: ["convex/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [{ group: ["**/extension/*", "**/extension/**"], message: "the backend never imports the extension" }] }] },
  },
);
