// The operator console's webview document, for the UI suites that drive the console.
import { UI_TIMEOUT } from "./session.mjs";

/**
 * The console's document: the editor webview whose page has the console's tabs. Found by its outer frame's name or the
 * webview id in its address, not by its place among the webviews, which changes as views open and close.
 */
export async function consoleFrame(page) {
  const webviews = page.locator('iframe.webview[src*="extensionId=farmhand.farmhand"]');
  const deadline = Date.now() + UI_TIMEOUT;
  while (Date.now() < deadline) {
    for (let i = 0; i < (await webviews.count()); i++) {
      const name = await webviews.nth(i).getAttribute("name");
      const id = new URL((await webviews.nth(i).getAttribute("src")) ?? "", "http://x").searchParams.get("id");
      const selector = name ? `iframe.webview[name="${name}"]` : id ? `iframe.webview[src*="id=${id}&"]` : undefined;
      if (!selector) continue;
      const inner = page.frameLocator(selector).frameLocator("#active-frame");
      if ((await inner.locator("vscode-tabs#tabs").count()) > 0) return inner;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("the console's webview never appeared");
}
