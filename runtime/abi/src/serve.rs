//! Served replays: one target process answers many replay requests, forking a child per input
//! (the forkserver idea applied to triage's replays: no exec, no dynamic loading and no debug
//! information read again per input, and one input's state never reaches another's).
//!
//! A numfuzz-cc program with a libFuzzer-style harness and a runtime that carries
//! [`MARKER`] serves when started with [`env::SERVE`](crate::env::SERVE) set: it reads
//! requests on stdin and writes replies on stdout, all integers `u32` little-endian.
//!
//! 1. Hello: the server writes [`HELLO`] once it is ready.
//! 2. Request: the input (length, bytes), then the number of variables, then each variable's
//!    name and value (length, bytes each). Only [`PER_INPUT`] variables are accepted; the
//!    child sets them before the runtime reads them. End of stdin ends the server.
//! 3. Reply: the child's pid as soon as it is forked (so that the requester can stop it when
//!    its time is up), then, once it ended, its `waitpid` status and everything it wrote on
//!    stderr (length, bytes): the same JSON events a replay in its own process prints.

use std::io::{self, Read, Write};

/// The server is ready (`NFSV`).
pub const HELLO: u32 = 0x5653_464e;

/// The string a runtime that serves replays puts into the runtime section beside its marker.
pub const MARKER: &str = "numfuzz-serve 1";

/// The variables a request may set for its input: those the runtime reads per input, or again
/// in a served child before the input runs.
pub const PER_INPUT: &[&str] = &[
    crate::env::TAINT_SKIP,
    crate::env::TAINT_MODE,
    crate::env::REPAIR,
    crate::env::SHADOW_PRECISION,
    crate::env::SHADOW_STEER,
];

/// Largest input or variable a request may carry (a corrupt length ends the server instead of
/// an allocation that fails).
pub const MAX_FIELD: u32 = 1 << 30;

/// One replay request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub input: Vec<u8>,
    pub vars: Vec<(String, String)>,
}

impl Request {
    /// The request's bytes as they go on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.input.len() + 64);
        put_bytes(&mut out, &self.input);
        put_u32(&mut out, self.vars.len() as u32);
        for (name, value) in &self.vars {
            put_bytes(&mut out, name.as_bytes());
            put_bytes(&mut out, value.as_bytes());
        }
        out
    }

    /// The next request on `r`; `None` at the end of input before a request began.
    pub fn read(r: &mut impl Read) -> io::Result<Option<Request>> {
        let mut first = [0u8; 4];
        match r.read(&mut first[..1])? {
            0 => return Ok(None),
            _ => r.read_exact(&mut first[1..])?,
        }
        let input = read_field(r, u32::from_le_bytes(first))?;
        let count = read_u32(r)?;
        let mut vars = Vec::new();
        for _ in 0..count {
            let name = read_text(r)?;
            let value = read_text(r)?;
            vars.push((name, value));
        }
        Ok(Some(Request { input, vars }))
    }
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// One `u32`.
pub fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// Writes one `u32`.
pub fn write_u32(w: &mut impl Write, v: u32) -> io::Result<()> {
    w.write_all(&v.to_le_bytes())
}

/// A field of `len` bytes.
fn read_field(r: &mut impl Read, len: u32) -> io::Result<Vec<u8>> {
    if len > MAX_FIELD {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("field of {len} bytes"),
        ));
    }
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

/// A length-prefixed field of bytes.
pub fn read_bytes(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let len = read_u32(r)?;
    read_field(r, len)
}

/// Writes a length-prefixed field of bytes.
pub fn write_bytes(w: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    write_u32(w, bytes.len() as u32)?;
    w.write_all(bytes)
}

fn read_text(r: &mut impl Read) -> io::Result<String> {
    String::from_utf8(read_bytes(r)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_as_written_and_the_end_of_input_is_no_request() {
        let req = Request {
            input: vec![0, 1, 2, 255],
            vars: vec![(crate::env::REPAIR.into(), "12:Overflow".into())],
        };
        let empty = Request::default();
        let mut wire = req.encode();
        wire.extend(empty.encode());
        let mut r = wire.as_slice();
        assert_eq!(Request::read(&mut r).unwrap(), Some(req));
        assert_eq!(Request::read(&mut r).unwrap(), Some(empty));
        assert_eq!(Request::read(&mut r).unwrap(), None);
        // A request cut short is an error, not the end.
        let cut = Request::default().encode();
        assert!(Request::read(&mut &cut[..6]).is_err());
    }
}
