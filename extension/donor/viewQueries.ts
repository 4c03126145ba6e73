import { api } from "../../convex/_generated/api";

/**
 * Every query a visible donor view (the Farm tree, the control panel) subscribes to, with its key as the only
 * argument: one, the throttled summary, which carries this machine's credit too (issue 18). The fan-out benchmark
 * opens exactly these for each view it simulates, so a subscription added here is measured there.
 */
export const DONOR_VIEW_QUERIES = [api.farm.overview] as const;
