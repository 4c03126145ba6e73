/**
 * The HTTP address (`…convex.site`) of a deployment, where its HTTP routes (apps, the jobs API) are served: a
 * cloud deployment's `https://<name>.convex.cloud` becomes `https://<name>.convex.site`; any other address (a
 * local backend, the loopback test server) serves its routes on the URL itself unless `explicit` says otherwise.
 */
export function siteUrlFor(deploymentUrl: string, explicit?: string): string {
  if (explicit) return explicit.replace(/\/+$/, "");
  const url = new URL(deploymentUrl);
  if (url.hostname.endsWith(".convex.cloud")) url.hostname = `${url.hostname.slice(0, -".convex.cloud".length)}.convex.site`;
  return url.toString().replace(/\/+$/, "");
}
