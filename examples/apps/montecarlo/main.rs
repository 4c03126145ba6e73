//! montecarlo: estimates π by throwing random points at the unit square, checkpointing as it goes.
//!
//! payload: {"samples": 20000000, "seed": 1, "checkpointEvery": 2000000}
//!   samples          points to throw, 1 ..= 10^12
//!   seed             any whole number; the same seed gives the same estimate
//!   checkpointEvery  print a checkpoint after this many points (default: a tenth of the samples)
//! result:  {"samples": N, "inside": K, "pi": 3.14…, "seed": S, "resumedFrom": M}
//!
//! A checkpoint holds the points thrown so far, the hits and the generator's state (base64 of 32 bytes). Given
//! one on stdin, the app continues from it: the estimate is exactly the one an uninterrupted run gives.
//! std only: a tiny scanner reads the flat numeric payload; base64 is written out by hand.

use std::io::{Read, Write};

const MAX_SAMPLES: u64 = 1_000_000_000_000;
const CHECKPOINT_MAGIC: u32 = 0x4d43_5049; // "MCPI"

struct State {
    done: u64,
    inside: u64,
    rng: u64,
}

/// splitmix64: small, fast, and its whole state is one u64, which keeps the checkpoint tiny.
fn next(rng: &mut u64) -> u64 {
    *rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *rng;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn unit(rng: &mut u64) -> f64 {
    (next(rng) >> 11) as f64 / (1u64 << 53) as f64
}

/// The text after `"key":` in `input` (from `from`), trimmed of leading blanks.
fn value_after<'a>(input: &'a str, key: &str) -> Option<&'a str> {
    let pattern = format!("\"{}\"", key);
    let at = input.find(&pattern)? + pattern.len();
    let rest = input[at..].trim_start();
    rest.strip_prefix(':').map(|r| r.trim_start())
}

fn payload_number(input: &str, key: &str) -> Result<Option<u64>, String> {
    let payload = match input.find("\"payload\"") {
        Some(at) => &input[at..],
        None => return Ok(None),
    };
    let text = match value_after(payload, key) {
        Some(t) => t,
        None => return Ok(None),
    };
    let digits: String = text.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits
        .parse::<u64>()
        .map(Some)
        .map_err(|_| format!("payload field \"{}\" must be a whole number", key))
}

fn checkpoint_text(input: &str) -> Option<String> {
    let text = value_after(input, "checkpoint")?.strip_prefix('"')?;
    Some(text[..text.find('"')?].to_string())
}

const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let v = (chunk[0] as u32) << 16 | (*chunk.get(1).unwrap_or(&0) as u32) << 8 | *chunk.get(2).unwrap_or(&0) as u32;
        out.push(DIGITS[(v >> 18) as usize & 63] as char);
        out.push(DIGITS[(v >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { DIGITS[(v >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { DIGITS[v as usize & 63] as char } else { '=' });
    }
    out
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = DIGITS.iter().position(|&d| d == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

fn encode_state(state: &State, samples: u64) -> String {
    let mut bytes = Vec::with_capacity(36);
    bytes.extend_from_slice(&CHECKPOINT_MAGIC.to_le_bytes());
    for v in [samples, state.done, state.inside, state.rng] {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    base64_encode(&bytes)
}

fn decode_state(text: &str, samples: u64) -> Result<State, String> {
    let bytes = base64_decode(text).ok_or("the checkpoint is not base64")?;
    let word = |i: usize| u64::from_le_bytes(bytes[4 + 8 * i..12 + 8 * i].try_into().unwrap());
    if bytes.len() != 36 || u32::from_le_bytes(bytes[..4].try_into().unwrap()) != CHECKPOINT_MAGIC {
        return Err("the checkpoint is not one of this app's".into());
    }
    if word(0) != samples {
        return Err(format!("the checkpoint is for {} samples, the payload asks for {}", word(0), samples));
    }
    let state = State { done: word(1), inside: word(2), rng: word(3) };
    if state.done > samples || state.inside > state.done {
        return Err("the checkpoint is inconsistent".into());
    }
    Ok(state)
}

fn run() -> Result<(), String> {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).map_err(|e| format!("cannot read stdin: {}", e))?;
    let samples = payload_number(&input, "samples")?.unwrap_or(10_000_000);
    if samples == 0 || samples > MAX_SAMPLES {
        return Err(format!("samples must be from 1 to {}", MAX_SAMPLES));
    }
    let seed = payload_number(&input, "seed")?.unwrap_or(1);
    let every = payload_number(&input, "checkpointEvery")?.unwrap_or(samples / 10).max(1);

    let mut state = match checkpoint_text(&input) {
        Some(text) => decode_state(&text, samples)?,
        None => State { done: 0, inside: 0, rng: seed },
    };
    let resumed_from = state.done;
    if resumed_from > 0 {
        eprintln!("montecarlo: resuming after {} of {} samples", resumed_from, samples);
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    while state.done < samples {
        let batch = every.min(samples - state.done);
        for _ in 0..batch {
            let x = unit(&mut state.rng);
            let y = unit(&mut state.rng);
            if x * x + y * y <= 1.0 {
                state.inside += 1;
            }
        }
        state.done += batch;
        let estimate = 4.0 * state.inside as f64 / state.done as f64;
        writeln!(out, "{{\"progress\": {:.6}, \"status\": \"{} samples, pi ~ {:.6}\"}}", state.done as f64 / samples as f64, state.done, estimate)
            .and_then(|_| if state.done < samples { writeln!(out, "{{\"checkpoint\": \"{}\"}}", encode_state(&state, samples)) } else { Ok(()) })
            .and_then(|_| out.flush())
            .map_err(|e| format!("cannot write: {}", e))?;
    }
    let pi = 4.0 * state.inside as f64 / samples as f64;
    writeln!(
        out,
        "{{\"samples\": {}, \"inside\": {}, \"pi\": {}, \"seed\": {}, \"resumedFrom\": {}}}",
        samples, state.inside, pi, seed, resumed_from
    )
    .map_err(|e| format!("cannot write: {}", e))
}

fn main() {
    if let Err(message) = run() {
        eprintln!("montecarlo: {}", message);
        std::process::exit(2);
    }
}
