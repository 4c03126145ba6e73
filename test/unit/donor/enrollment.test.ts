import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { answersLikeConvex, operatorKeyProblem, secretProblem } from "../../../extension/donor/enrollment";

const BODY = "A".repeat(43);

describe("a pasted token or key, checked before the farm is asked", () => {
  it("accepts a well-formed enrollment token or worker key", () => {
    expect(secretProblem(`fh_e_${BODY}`)).toBeUndefined();
    expect(secretProblem(` fh_w_${"a-_9".repeat(10)}xyz `)).toBeUndefined();
  });

  it("says the length is wrong for a token that starts right but is cut short", () => {
    expect(secretProblem("fh_e_thisisnotarealtoken")).toBe("An enrollment token has 43 characters after fh_e_; this one has 19: copy it again in full");
  });

  it("names the characters a token never has", () => {
    expect(secretProblem(`fh_e_${BODY.slice(2)} .`)).toBe('An enrollment token has only letters, digits, "-" and "_" after fh_e_; this one also has " " "."');
  });

  it("tells a client key and a stranger from a token", () => {
    expect(secretProblem(`fh_c_${BODY}`)).toMatch(/^This is a client key \(fh_c_…\), for submitting jobs/);
    expect(secretProblem("hunter2")).toMatch(/^An enrollment token starts with fh_e_/);
    expect(secretProblem("  ")).toBe("The token is required");
  });
});

describe("a pasted operator key (Farmhand: Open Console asks for one), checked before the farm is asked", () => {
  it("accepts a well-formed fh_o_ key", () => {
    expect(operatorKeyProblem(` fh_o_${BODY} `)).toBeUndefined();
  });

  it("refuses a worker key, client key or token, a stranger, a cut one, and says what an operator key is", () => {
    for (const other of [`fh_w_${BODY}`, `fh_c_${BODY}`, `fh_e_${BODY}`]) expect(operatorKeyProblem(other)).toMatch(/^An operator key starts with fh_o_ \(this is/);
    expect(operatorKeyProblem("hunter2")).toBe("An operator key starts with fh_o_: copy it again");
    expect(operatorKeyProblem(`FH_O_${BODY}`)).toBe("An operator key starts with fh_o_: copy it again");
    expect(operatorKeyProblem("fh_o_short")).toMatch(/has 43 characters after fh_o_; this one has 5/);
    expect(operatorKeyProblem(`fh_o_${BODY.slice(1)}!`)).toMatch(/only letters, digits/);
    expect(operatorKeyProblem("")).toBe("The operator key is required");
  });

  it("joining with an operator key says it is for the console", () => {
    expect(secretProblem(`fh_o_${BODY}`)).toMatch(/^This is an operator key \(fh_o_…\), for the console/);
  });
});

describe("whether an address answers like a Convex deployment", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  async function serve(status: number, body: string, type = "application/json"): Promise<string> {
    server = createServer((_req, res) => res.writeHead(status, { "Content-Type": type }).end(body));
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    return `http://127.0.0.1:${address.port}`;
  }

  it("yes for a function-call answer (an error with a status, as a farm refuses an empty key)", async () => {
    expect(await answersLikeConvex(await serve(560, JSON.stringify({ status: "error", errorMessage: "bad key", errorData: { code: "bad_key" } })))).toBe(true);
  });

  it("no for another web server's error or page", async () => {
    expect(await answersLikeConvex(await serve(405, "Unsupported method POST", "text/plain"))).toBe(false);
  });

  it("no for JSON that is not a function-call answer", async () => {
    expect(await answersLikeConvex(await serve(200, JSON.stringify({ ok: true })))).toBe(false);
  });

  it("no for an address where nothing listens", async () => {
    const url = await serve(200, "{}");
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    expect(await answersLikeConvex(url)).toBe(false);
  });
});
