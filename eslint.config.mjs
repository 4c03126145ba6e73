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
);
