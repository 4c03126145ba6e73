// Debian's Chromium, headless, through playwright-core (which downloads no browser of its own).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const CHROMIUM = process.env.FARMHAND_CHROMIUM ?? "/usr/bin/chromium";

/** Launches a fresh headless Chromium; `close()` ends it and removes its profile. */
export async function launchChromium() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: on Debian run \`apt-get install chromium\` (or set FARMHAND_CHROMIUM)`);
  }
  const userDataDir = mkdtempSync(join(tmpdir(), "farmhand-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
