/** A whole worker key (fh_w_ and 43 base64url characters); the 9-character display prefix does not match. */
export const WORKER_KEY_PATTERN = /fh_w_[A-Za-z0-9_-]{43}/;
