// Locators for the parts of the VS Code workbench the UI test touches (code-server 4.100 / VS Code 1.100 DOM).

/** The Farmhand status-bar item. */
export const statusBarItem = (page) => page.locator(".statusbar-item").filter({ hasText: "Farmhand" }).first();

/** The Farmhand icon in the activity bar. */
export const activityBarItem = (page) => page.locator('.activitybar .action-item a[aria-label^="Farmhand"]').first();

/** The welcome content of the Farm tree view. */
export const farmWelcome = (page) => page.locator(".pane-body .welcome-view-content").filter({ hasText: "farm" }).first();

/** A row of a tree or list in the side bar, by its label. */
export const treeRow = (page, label) => page.locator(".sidebar .monaco-list-row").filter({ hasText: label }).first();

/** The quick input (input boxes, pickers): its title and its text box. */
export const quickInputTitle = (page) => page.locator(".quick-input-widget .quick-input-title");
export const quickInputBox = (page) => page.locator(".quick-input-widget .quick-input-box input");

/**
 * The control panel's content. A webview view is an outer iframe (the host page) holding the real document in
 * `#active-frame`; the outer one is found by the extension id the workbench puts in its `src`.
 */
export const panelFrame = (page) =>
  page.frameLocator('iframe.webview[src*="extensionId=farmhand.farmhand"]').frameLocator("#active-frame");

/** The host page of the control panel's webview (the outer iframe): `__vscode_post_message__` there is what the panel's
 * own `acquireVsCodeApi().postMessage` calls, so a message posted through it arrives exactly as the panel's would. */
export async function panelHostFrame(page) {
  const element = await page.locator('iframe.webview[src*="extensionId=farmhand.farmhand"]').elementHandle();
  const frame = await element?.contentFrame();
  if (!frame) throw new Error("the control panel's webview frame is not there");
  return frame;
}

/** The hover widget (status-bar tooltips). */
export const hoverWidget = (page) => page.locator(".workbench-hover, .monaco-hover").filter({ hasText: "Farmhand" }).first();

/** Waits until the workbench has finished its first layout. */
export async function waitForWorkbench(page, timeout) {
  await page.locator(".monaco-workbench .part.statusbar").waitFor({ timeout });
}
