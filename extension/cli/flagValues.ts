/** Checks of command-line flag values shared by the worker's and the publisher's flags: each error names the flag. */

export function checkHttpUrl(value: string, flag: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${flag} is not a URL: ${value}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${flag} must start with http:// or https://, got ${value}`);
}

export function wholeNumber(value: string, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${flag} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return n;
}
