import * as vscode from "vscode";

/**
 * The one page shell both webviews (the control panel, the console) are served in: a strict Content Security
 * Policy whose only script is the bundle carrying this page's nonce, styles and images from the extension only.
 */
export function webviewPage(
  webview: vscode.Webview,
  page: { script: vscode.Uri; style: vscode.Uri; title: string; body: string },
): string {
  const nonce = makeNonce();
  const csp = ["default-src 'none'", `style-src ${webview.cspSource}`, `script-src 'nonce-${nonce}'`, `img-src ${webview.cspSource} data:`].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${csp}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${webview.asWebviewUri(page.style).toString()}">
  <title>${page.title}</title>
</head>
<body>
${page.body}
  <script nonce="${nonce}" src="${webview.asWebviewUri(page.script).toString()}"></script>
</body>
</html>`;
}

function makeNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString("base64url");
}
