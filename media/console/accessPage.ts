import type { VscodeSingleSelect } from "@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js";
import type { VscodeTextfield } from "@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js";
import { FAIR } from "../../convex/contract";
import {
  fairnessWeightsOfText,
  fairnessWeightsText,
  tokenStateAt,
  type ConsoleState,
  type FairnessWeight,
  type SecretKind,
} from "../../extension/protocol/consoleProtocol";
import { button, el, post, scrolling, table, when } from "./dom";

/**
 * The Access page: forms for an enrollment token, a client key and an operator key (each one, with what the
 * operator typed and the secret it just made, stays on screen across live updates), then the lists.
 */
export function accessPage(content: HTMLElement, { access }: ConsoleState, parts: Node[], now: number): void {
  const kept = <T extends Element>(selector: string) => content.querySelector<T>(selector);
  parts.push(el("h2", "New enrollment token"), kept<HTMLFormElement>("#token-form") ?? tokenForm());
  const tokenBox = kept("#secret-enrollment");
  if (tokenBox) parts.push(tokenBox);
  parts.push(el("h2", "New client key"), kept<HTMLFormElement>("#client-key-form") ?? clientKeyForm());
  const clientBox = kept("#secret-client");
  if (clientBox) parts.push(clientBox);
  parts.push(el("h2", "New operator key"), kept<HTMLFormElement>("#operator-key-form") ?? operatorKeyForm());
  const operatorBox = kept("#secret-operator");
  if (operatorBox) parts.push(operatorBox);
  if (!access) return void parts.push(el("p", "Loading…"));
  if (!access.asOperator) {
    const why =
      "This console uses a worker's key: it makes enrollment tokens and client keys, but no operator key and no client key that may publish apps, and sets no client key's share of the farm (use an operator key for those).";
    parts.push(el("p", why, { class: "note", id: "operator-only" }));
  } else {
    const limitsForm = kept<HTMLFormElement>("#limits-form") ?? shareForm();
    syncShareForm(limitsForm, access.clientKeys.filter((k) => !k.revoked));
    parts.push(
      el("h2", "A client key's share of the farm"),
      el(
        "p",
        "Inside a priority level the farm takes turns between client keys by weight, and inside a key between its fairness keys (weight 1 unless set here); a key's jobs past its most running wait.",
        { class: "label" },
      ),
      limitsForm,
    );
  }
  if (access.asOperator) {
    const on = access.cacheUnvalidated === true;
    parts.push(
      el("h2", "Result cache"),
      el(
        "p",
        on
          ? "Results one worker returned alone enter the cache: identical jobs of every client key take them."
          : "Only results a quorum of at least 2 workers agreed on enter the cache (validation quorum ≥ 2).",
        { class: "label", id: "cache-trust" },
      ),
      button(on ? "Cache Quorum Results Only" : "Also Cache Single-Worker Results…", () => post({ type: "setCacheUnvalidated", on: !on }), { id: "cache-unvalidated", secondary: "" }),
    );
  }
  const revoke = (what: string, id: string, request: Parameters<typeof post>[0]) =>
    button("Revoke…", () => post(request), { secondary: "", class: "revoke", "data-for": id, "aria-label": `Revoke ${what}` });
  parts.push(
    el("h2", "Enrollment tokens"),
    scrolling(
      table(
        ["Token", "State", "Donor", "Capabilities", "Slots", "May manage", "Expires", ""],
        access.enrollments.map((e) => {
          const state = tokenStateAt(e, now);
          return [
            `${e.tokenPrefix}…`,
            state,
            e.donor ?? "",
            e.capabilities.join(", "),
            String(e.maxConcurrentJobs),
            e.canManage ? "yes" : "no",
            when(e.expiresAt),
            // a used token is revoked by revoking the worker it enrolled; a revoked or expired one does nothing any more
            state === "open" ? revoke(`token ${e.tokenPrefix}…`, e.enrollmentId, { type: "revokeEnrollment", enrollmentId: e.enrollmentId }) : "",
          ];
        }),
        { id: "enrollments" },
        ["13%", "8%", "12%", "20%", "6%", "10%", "18%", "112px"],
      ),
      "wide",
    ),
    el("h2", "Client keys"),
    scrolling(
      table(
        ["Name", "Key", "State", "May publish apps", "Weight", "Most running", "Fairness weights", ""],
        access.clientKeys.map((k) => [
          k.name,
          `${k.keyPrefix}…`,
          k.revoked ? "revoked" : "active",
          k.canPublish ? "yes" : "no",
          String(k.weight),
          k.maxRunning === null ? "no limit" : String(k.maxRunning),
          String(k.fairnessWeights),
          k.revoked ? "" : revoke(`client key ${k.name}`, k.clientKeyId, { type: "revokeClientKey", clientKeyId: k.clientKeyId }),
        ]),
        { id: "client-keys" },
        ["18%", "14%", "9%", "12%", "8%", "11%", "12%", "112px"],
      ),
      "wide",
    ),
    el("h2", "Operator keys"),
    scrolling(
      table(
        ["Name", "Key", "State", ""],
        access.operatorKeys.map((k) => [
          k.name + (k.isMe ? " (this console)" : ""),
          `${k.keyPrefix}…`,
          k.revoked ? "revoked" : "active",
          k.revoked || k.isMe ? "" : revoke(`operator key ${k.name}`, k.operatorKeyId, { type: "revokeOperatorKey", operatorKeyId: k.operatorKeyId }),
        ]),
        { id: "operator-keys" },
        ["40%", "25%", "20%", "112px"],
      ),
      "narrow",
    ),
  );
  if (access.operatorKeys.length === 0) parts.push(el("p", "No operator keys yet: the console uses this machine's worker key, which may manage the farm.", { class: "label", id: "no-operator-keys" }));
}

function field(label: string, control: HTMLElement): HTMLElement {
  const box = el("label", undefined, { class: "field" });
  box.append(el("span", label, { class: "label" }), control);
  return box;
}

function tokenForm(): HTMLFormElement {
  const form = el("form", undefined, { id: "token-form", class: "filters" });
  const caps = el("vscode-textfield", undefined, { id: "token-capabilities", placeholder: "demo.echo, ollama:*", "aria-label": "Capabilities" });
  const slots = el("vscode-textfield", undefined, { id: "token-slots", type: "number", min: "1", max: "32", value: "1", "aria-label": "Slots" });
  const ttl = el("vscode-textfield", undefined, { id: "token-ttl", type: "number", min: "1", max: "8760", value: "24", "aria-label": "Valid for hours" });
  const donor = el("vscode-textfield", undefined, { id: "token-donor", placeholder: "alice", maxlength: "128", "aria-label": "Donor" });
  const manage = el("vscode-checkbox", undefined, { id: "token-manage", label: "May manage the farm" });
  form.append(
    field("Capabilities", caps),
    field("Donor (who owns the machine)", donor),
    field("Slots", slots),
    field("Valid for (hours)", ttl),
    manage,
    el("vscode-button", "Create Enrollment Token", { id: "token-create", type: "submit" }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const capabilities = caps.value.split(",").map((c) => c.trim()).filter((c) => c.length > 0);
    const owner = donor.value.trim();
    post({ type: "createToken", capabilities, slots: Number(slots.value), ttlHours: Number(ttl.value), canManage: manage.checked, ...(owner ? { donor: owner } : {}) });
  });
  return form;
}

function clientKeyForm(): HTMLFormElement {
  const form = el("form", undefined, { id: "client-key-form", class: "filters" });
  const name = el("vscode-textfield", undefined, { id: "client-key-name", placeholder: "nightly builds", maxlength: "100", "aria-label": "Client key name" });
  const publish = el("vscode-checkbox", undefined, { id: "client-key-publish", label: "May publish apps" });
  form.append(field("Name", name), publish, el("vscode-button", "Create Client Key", { id: "client-key-create", type: "submit" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const typed = name.value.trim();
    name.invalid = typed.length === 0;
    if (typed) post({ type: "createClientKey", name: typed, canPublish: publish.checked });
  });
  return form;
}

type ClientKeyRow = NonNullable<ConsoleState["access"]>["clientKeys"][number];
/** The keys each share form was last given (the one on screen). */
const formKeys = new WeakMap<HTMLFormElement, ClientKeyRow[]>();

/**
 * A client key's weight, most running and fairness weights: choosing a key fills the fields with what it has (its
 * fairness weights are asked of the farm), Save replaces all three (an empty field: the default).
 */
function shareForm(): HTMLFormElement {
  const form = el("form", undefined, { id: "limits-form", class: "filters" });
  const key = el("vscode-single-select", undefined, { id: "limits-key", "aria-label": "Client key" });
  // a text field checked on Save: vscode-textfield's step is a number property, so step="any" never reaches its input
  // and the browser would refuse 3 (steps of 1 from min 0.001)
  const weight = el("vscode-textfield", undefined, { id: "limits-weight", inputmode: "decimal", placeholder: "1", "aria-label": "Weight" });
  const most = el("vscode-textfield", undefined, { id: "limits-max-running", type: "number", min: "0", step: "1", placeholder: "no limit", "aria-label": "Most running" });
  const weights = el("vscode-textfield", undefined, { id: "limits-fairness-weights", placeholder: "gold=4, free=0.5", "aria-label": "Fairness weights" });
  form.append(
    field("Client key", key),
    field("Weight", weight),
    field("Most running", most),
    field("Fairness weights", weights),
    el("vscode-button", "Save", { id: "limits-save", type: "submit" }),
  );
  key.addEventListener("change", () => fillShareForm(form));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const clientKeyId = key.value;
    if (!clientKeyId) return;
    const w = weight.value.trim() === "" ? null : Number(weight.value);
    const m = most.value.trim() === "" ? null : Number(most.value);
    const entries = weights.value.trim() === "" ? null : fairnessWeightsOfText(weights.value);
    weight.invalid = w !== null && !(w >= FAIR.weightMin && w <= FAIR.weightMax);
    most.invalid = m !== null && !(Number.isInteger(m) && m >= 0 && m <= FAIR.maxRunningMax);
    weights.invalid = typeof entries === "string";
    weights.title = typeof entries === "string" ? entries : "";
    if (weight.invalid || most.invalid || typeof entries === "string") return;
    post({ type: "setClientKeyLimits", clientKeyId, weight: w, maxRunning: m, fairnessWeights: entries });
  });
  return form;
}

/** The form's keys follow the list (an active key, by name); a new choice of key fills the fields. */
function syncShareForm(form: HTMLFormElement, keys: ClientKeyRow[]): void {
  const select = form.querySelector<VscodeSingleSelect>("#limits-key")!;
  const signature = JSON.stringify(keys.map((k) => [k.clientKeyId, k.name, k.weight, k.maxRunning, k.fairnessWeights]));
  if (form.dataset.keys === signature) return;
  const chosen = keys.some((k) => k.clientKeyId === select.value) ? select.value : (keys[0]?.clientKeyId ?? "");
  const before = form.dataset.keys === undefined ? undefined : select.value;
  form.dataset.keys = signature;
  formKeys.set(form, keys);
  select.replaceChildren(...keys.map((k) => el("vscode-option", k.name, { value: k.clientKeyId })));
  select.value = chosen;
  // the fields are the operator's while they edit: filled again only for another key
  if (chosen !== before) fillShareForm(form);
}

function fillShareForm(form: HTMLFormElement): void {
  const keys = formKeys.get(form) ?? [];
  const key = keys.find((k) => k.clientKeyId === form.querySelector<VscodeSingleSelect>("#limits-key")!.value);
  const [weight, most, weights] = ["#limits-weight", "#limits-max-running", "#limits-fairness-weights"].map((id) => form.querySelector<VscodeTextfield>(id)!);
  weight.value = key ? String(key.weight) : "";
  most.value = key?.maxRunning === null || key === undefined ? "" : String(key.maxRunning);
  weights.value = "";
  weights.placeholder = key && key.fairnessWeights > 0 ? "loading…" : "gold=4, free=0.5";
  if (key && key.fairnessWeights > 0) post({ type: "loadFairnessWeights", clientKeyId: key.clientKeyId });
}

/** The farm's answer to loadFairnessWeights: into the form if it still shows that key. */
export function showFairnessWeights(content: HTMLElement, clientKeyId: string, entries: FairnessWeight[]): void {
  const form = content.querySelector<HTMLFormElement>("#limits-form");
  if (!form || form.querySelector<VscodeSingleSelect>("#limits-key")?.value !== clientKeyId) return;
  const weights = form.querySelector<VscodeTextfield>("#limits-fairness-weights")!;
  weights.value = fairnessWeightsText(entries);
  weights.placeholder = "gold=4, free=0.5";
}

function operatorKeyForm(): HTMLFormElement {
  const form = el("form", undefined, { id: "operator-key-form", class: "filters" });
  const name = el("vscode-textfield", undefined, { id: "operator-key-name", placeholder: "alice's laptop", maxlength: "100", "aria-label": "Operator key name" });
  form.append(field("Name", name), el("vscode-button", "Create Operator Key", { id: "operator-key-create", type: "submit" }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const typed = name.value.trim();
    name.invalid = typed.length === 0;
    if (typed) post({ type: "createOperatorKey", name: typed });
  });
  return form;
}

const SECRET_TEXT: Record<SecretKind, { form: string; label: string; hint: string }> = {
  enrollment: { form: "#token-form", label: "Enrollment token", hint: "Hand this token to the donor; it is shown only now and works once." },
  client: {
    form: "#client-key-form",
    label: "Client key",
    hint: "The app that submits jobs uses this key (FARMHAND_CLIENT_KEY, or the client key file); it is shown only now.",
  },
  operator: {
    form: "#operator-key-form",
    label: "Operator key",
    hint: "Keep this key for the console (Farmhand: Enter Operator Key…) and the CLI's operator commands (FARMHAND_OPERATOR_KEY); it is shown only now.",
  },
};

/** A secret is shown once, under the form that made it, with a copy button; it is never kept in the webview's state. */
export function showSecret(content: HTMLElement, kind: SecretKind, secret: string): void {
  const text = SECRET_TEXT[kind];
  const box = el("div", undefined, { id: `secret-${kind}`, class: "token" });
  const value = el("vscode-textfield", undefined, { id: `secret-${kind}-value`, class: "secret-value", readonly: "", "aria-label": text.label });
  value.value = secret;
  box.append(el("p", text.hint), value, button("Copy", () => void navigator.clipboard.writeText(secret), { id: `secret-${kind}-copy`, secondary: "" }));
  content.querySelector(`#secret-${kind}`)?.remove();
  content.querySelector(text.form)?.after(box);
}
