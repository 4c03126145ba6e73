import { APP_LIMITS } from "../../../convex/contract";
import { HandlerError } from "../../worker/errors";
import type { AppPin } from "./appPin";
import type { ModuleSource } from "./appRunner";

export type HttpModuleSourceOptions = {
  /** The deployment's HTTP address (`https://<name>.convex.site`, or the loopback server's). */
  siteUrl: string;
  /** The worker's key (`fh_w_…`). */
  apiKey: string;
  fetch?: typeof fetch;
};

/**
 * Downloads a pinned app version from `GET <site>/api/apps/<name>/<version>/module` with the worker key. A
 * version that is gone (deleted, or never this org's) fails without retry; other failures may be retried.
 */
export function httpModuleSource(options: HttpModuleSourceOptions): ModuleSource {
  const doFetch = options.fetch ?? fetch;
  const base = options.siteUrl.replace(/\/+$/, "");
  return async (app: AppPin) => {
    const url = `${base}/api/apps/${encodeURIComponent(app.name)}/${app.version}/module`;
    const response = await doFetch(url, { headers: { authorization: `Bearer ${options.apiKey}` } });
    if (!response.ok) {
      const detail = await errorMessage(response);
      // Gone for good (deleted, or not this org's): another attempt would get the same answer.
      const retryable = !(response.status === 404 || response.status === 410);
      throw new HandlerError(`cannot download app "${app.name}" v${app.version}: HTTP ${response.status}${detail ? `: ${detail}` : ""}`, { retryable });
    }
    const declared = Number(response.headers.get("content-length"));
    if (declared > APP_LIMITS.moduleBytesMax) {
      throw new HandlerError(`app "${app.name}" v${app.version} is ${declared} bytes; modules are at most ${APP_LIMITS.moduleBytesMax}`, { retryable: false });
    }
    return new Uint8Array(await response.arrayBuffer());
  };
}

async function errorMessage(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: { message?: unknown } };
    return typeof body.error?.message === "string" ? body.error.message.slice(0, 300) : "";
  } catch {
    return "";
  }
}
