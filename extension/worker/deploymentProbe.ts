/**
 * Is a URL a Convex deployment? Shared by the extension's Join flow and the CLI (no 'vscode' here), so both
 * explain the same mistake the same way — a web page, a `.convex.site` address, another app's server — instead
 * of the Convex client failing on an answer it cannot read.
 */
export type DeploymentAnswer = "convex" | "notConvex" | "unreachable";

/**
 * Ask `url` for a function call the way the Convex client would (POST api/query) and judge the answer's shape:
 * a Convex deployment answers with a JSON body with a `status`; another web server with a page or an error of
 * its own. No answer at all (refused, timed out) is `unreachable`, and so is a server error that is not Convex's
 * own (a 502/503 from a proxy or load balancer while the deployment restarts): that says nothing about what the
 * URL is, and the worker's connection retries ride it out.
 */
export async function probeDeployment(url: string, timeoutMs = 5_000): Promise<DeploymentAnswer> {
  let response: Response;
  try {
    response = await fetch(new URL("api/query", url.endsWith("/") ? url : `${url}/`), {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ path: "workers:checkKey", args: { apiKey: "" }, format: "json" }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch {
    return "unreachable";
  }
  try {
    const body: unknown = await response.json();
    const convex = typeof body === "object" && body !== null && "status" in body && (body.status === "success" || body.status === "error");
    if (convex) return "convex";
  } catch {
    // Not JSON: judged by the status below.
  }
  return response.status >= 500 ? "unreachable" : "notConvex";
}

/** What to tell someone whose URL answers, but not like a Convex deployment. */
export function notConvexMessage(url: string): string {
  return `${url} does not answer like a Convex deployment — check the deployment URL your operator gave you`;
}
