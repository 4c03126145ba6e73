// What the packaged .vsix may contain: the bundles, the media they load, the manifest and the usual documents.
// Paths are relative to the extension root, as `vsce ls` prints them.
// dist/tracing.js: the OpenTelemetry tracer the extension loads when farmhand.otlpEndpoint is set
export const REQUIRED = ["package.json", "dist/extension.js", "dist/webview.js", "dist/console.js", "dist/console.css", "dist/tracing.js", "README.md", "LICENSE"];

const ALLOWED = [
  /^package\.json$/,
  /^(README|CHANGELOG)\.md$/,
  /^LICENSE(\.txt)?$/,
  /^dist\/[\w.-]+\.(js|css)$/,
  /^media\/[\w./-]+\.(png|svg|css|json|woff2?)$/,
];

/** Every reason the list is wrong; empty when it is right. */
export function vsixListProblems(files) {
  const problems = [];
  for (const file of REQUIRED) if (!files.includes(file)) problems.push(`missing ${file}`);
  for (const file of files) if (!ALLOWED.some((pattern) => pattern.test(file))) problems.push(`should not ship ${file}`);
  return problems;
}
