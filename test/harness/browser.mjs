// Debian's Chromium, headless, through playwright-core (which downloads no browser of its own).
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

const CHROMIUM = process.env.FARMHAND_CHROMIUM ?? "/usr/bin/chromium";

/** Launches a headless Chromium with a fresh profile in `userDataDir` (the caller removes it); `close()` ends it. */
export async function launchChromium(userDataDir) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: on Debian run \`apt-get install chromium\` (or set FARMHAND_CHROMIUM)`);
  }
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    // The runners clean up on signals themselves (code-server first), then exit.
    handleSIGINT: false,
    handleSIGTERM: false,
    viewport: { width: 1280, height: 800 },
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-dev-shm-usage",
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
    },
  };
}
