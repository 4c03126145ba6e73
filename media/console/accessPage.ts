import type { ConsoleState } from "../../extension/hostAndWebview/consoleProtocol";
import { button, el, post, table, when } from "./dom";

/** The Access page: a token form (what the operator typed survives re-renders), the token just made, the lists. */
export function accessPage(content: HTMLElement, { access }: ConsoleState, kept: HTMLFormElement | null, tokenBox: Element | null): void {
  content.append(el("h2", "New enrollment token"), kept ?? tokenForm());
  if (tokenBox) content.append(tokenBox);
  if (!access) return void content.append(el("p", "Loading…"));
  content.append(
    el("h2", "Enrollment tokens"),
    table(
      ["Token", "State", "Capabilities", "Slots", "May manage", "Expires", ""],
      access.enrollments.map((e) => [
        `${e.tokenPrefix}…`,
        e.state,
        e.capabilities.join(", "),
        String(e.maxConcurrentJobs),
        e.canManage ? "yes" : "no",
        when(e.expiresAt),
        // a used token is revoked by revoking the worker it enrolled; a revoked or expired one does nothing any more
        e.state === "open" ? button("Revoke…", () => post({ type: "revokeEnrollment", enrollmentId: e.enrollmentId }), { secondary: "", class: "revoke" }) : "",
      ]),
      { id: "enrollments" },
      ["14%", "9%", "25%", "7%", "11%", "20%", "14%"],
    ),
    el("h2", "Client keys"),
    table(
      ["Name", "Key", "State", "May publish apps", ""],
      access.clientKeys.map((k) => [
        k.name,
        `${k.keyPrefix}…`,
        k.revoked ? "revoked" : "active",
        k.canPublish ? "yes" : "no",
        k.revoked ? "" : button("Revoke…", () => post({ type: "revokeClientKey", clientKeyId: k.clientKeyId }), { secondary: "", class: "revoke" }),
      ]),
      { id: "client-keys" },
      ["28%", "20%", "14%", "22%", "16%"],
    ),
  );
}

function tokenForm(): HTMLFormElement {
  const form = el("form", undefined, { id: "token-form", class: "filters" });
  const caps = el("vscode-textfield", undefined, { id: "token-capabilities", placeholder: "demo.echo, ollama:*", "aria-label": "Capabilities" });
  const slots = el("vscode-textfield", undefined, { id: "token-slots", type: "number", min: "1", max: "32", value: "1", "aria-label": "Slots" });
  const ttl = el("vscode-textfield", undefined, { id: "token-ttl", type: "number", min: "1", max: "8760", value: "24", "aria-label": "Valid for hours" });
  const manage = el("vscode-checkbox", undefined, { id: "token-manage", label: "May manage the farm" });
  const field = (label: string, control: HTMLElement) => {
    const box = el("label", undefined, { class: "field" });
    box.append(el("span", label, { class: "label" }), control);
    return box;
  };
  form.append(
    field("Capabilities", caps),
    field("Slots", slots),
    field("Valid for (hours)", ttl),
    manage,
    el("vscode-button", "Create Enrollment Token", { id: "token-create", type: "submit" }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const capabilities = caps.value.split(",").map((c) => c.trim()).filter((c) => c.length > 0);
    post({ type: "createToken", capabilities, slots: Number(slots.value), ttlHours: Number(ttl.value), canManage: manage.checked });
  });
  return form;
}

/** A token is shown once, here, with a copy button; it is never kept in the webview's state. */
export function showToken(content: HTMLElement, token: string): void {
  const box = el("div", undefined, { id: "token-box", class: "token" });
  const field = el("vscode-textfield", undefined, { id: "token-value", readonly: "", "aria-label": "Enrollment token" });
  field.value = token;
  box.append(
    el("p", "Hand this token to the donor; it is shown only now and works once."),
    field,
    button("Copy", () => void navigator.clipboard.writeText(token), { id: "token-copy", secondary: "" }),
  );
  content.querySelector("#token-box")?.remove();
  content.querySelector("#token-form")?.after(box);
}
