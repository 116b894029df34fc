//! AFL++-style entry names: `id:000012,src:000003,time:812,execs:90321,+errbits`.
//!
//! numfuzz writes, per directory:
//! - `queue/`: `id:N` + provenance + why it was kept besides new edges (`+exc`, `+errbits`,
//!   `+cmp`; an entry kept for new edges alone has no tag);
//! - `crashes/`: `id:N,kind:K,site:S` + provenance for a floating-point exception (`+esc` when
//!   it was saved because a known (site, kind) first reached a declared result, `+alone` when
//!   one first met after another exception was raised before any),
//!   `id:N,crash` + provenance for a real crash, or `id:N,oom` + provenance for an input the
//!   memory limit (`-m`) stopped;
//! - `hangs/`: `id:N,hang` + provenance.
//!
//! Provenance is `src:N` (the corpus entry it was mutated from) or `orig:seed`, then `time:`
//! (ms since the campaign started) and `execs:`. afl-fuzz's own names (`sig:NN`, `op:havoc`,
//! `rep:2`, `orig:name`) parse too; fields this crate does not use are ignored.

use numfuzz_abi::kind::ExceptionKind;
use std::fmt;

/// What a saved input is, as its name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tag {
    /// `kind:K,site:S`: a floating-point exception at a site (the site's [`crate::site_label`]).
    Exception { kind: ExceptionKind, site: String },
    /// `crash`: a real crash (numfuzz).
    Crash,
    /// `oom`: the input went past the memory limit (`numfuzz run -m`) and was stopped.
    OutOfMemory,
    /// `sig:NN`: the target died by this signal (afl-fuzz).
    Signal(i32),
    /// `hang`: the input exceeded the time limit.
    Hang,
    /// Nothing of the above (queue entries, foreign names).
    None,
}

/// Where an entry came from and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The corpus entry it was mutated from; `None` for a seed (`orig:seed`).
    pub src: Option<u64>,
    /// Milliseconds since the campaign started.
    pub time_ms: u64,
    pub execs: u64,
}

/// An entry name, parsed or to be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryName {
    pub id: u64,
    pub tag: Tag,
    pub src: Option<u64>,
    pub time_ms: Option<u64>,
    pub execs: Option<u64>,
    /// Why it was kept, without the `+`: `errbits`, `cmp`, `exc`, `esc` (and afl-fuzz's `cov`).
    pub flags: Vec<String>,
}

impl EntryName {
    /// A name to write: `id`, `tag`, the provenance, then `flags`.
    pub fn new(id: u64, tag: Tag, provenance: Provenance, flags: &[&str]) -> EntryName {
        EntryName {
            id,
            tag,
            src: provenance.src,
            time_ms: Some(provenance.time_ms),
            execs: Some(provenance.execs),
            flags: flags.iter().map(|f| f.to_string()).collect(),
        }
    }

    /// Parses a name; `None` unless it starts with `id:N`.
    pub fn parse(name: &str) -> Option<EntryName> {
        let mut parts = name.split(',');
        let id = parts.next()?.strip_prefix("id:")?.parse().ok()?;
        let mut out = EntryName {
            id,
            tag: Tag::None,
            src: None,
            time_ms: None,
            execs: None,
            flags: Vec::new(),
        };
        let mut kind = None;
        let mut site = None;
        for part in parts {
            let number = |v: &str| v.parse::<u64>().ok();
            match part.split_once(':') {
                Some(("kind", v)) => kind = v.parse::<ExceptionKind>().ok(),
                Some(("site", v)) => site = Some(v.to_string()),
                Some(("sig", v)) => {
                    if let Ok(s) = v.parse() {
                        out.tag = Tag::Signal(s);
                    }
                }
                Some(("src", v)) => out.src = number(v),
                Some(("time", v)) => out.time_ms = number(v),
                Some(("execs", v)) => out.execs = number(v),
                Some(_) => {}
                None if part == "crash" => out.tag = Tag::Crash,
                None if part == "hang" => out.tag = Tag::Hang,
                None if part == "oom" => out.tag = Tag::OutOfMemory,
                None => {
                    if let Some(flag) = part.strip_prefix('+') {
                        out.flags.push(flag.to_string());
                    }
                }
            }
        }
        if let (Some(kind), Some(site)) = (kind, site) {
            out.tag = Tag::Exception { kind, site };
        }
        Some(out)
    }

    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

impl fmt::Display for EntryName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "id:{:06}", self.id)?;
        match &self.tag {
            // The kind and site come first, so a listing of crashes/ reads as a list of findings.
            Tag::Exception { kind, site } => write!(f, ",kind:{kind},site:{site}")?,
            Tag::Crash => f.write_str(",crash")?,
            Tag::Signal(s) => write!(f, ",sig:{s:02}")?,
            Tag::Hang => f.write_str(",hang")?,
            Tag::OutOfMemory => f.write_str(",oom")?,
            Tag::None => {}
        }
        match self.src {
            Some(src) => write!(f, ",src:{src:06}")?,
            None if self.time_ms.is_some() => f.write_str(",orig:seed")?,
            None => {}
        }
        if let Some(t) = self.time_ms {
            write!(f, ",time:{t}")?;
        }
        if let Some(e) = self.execs {
            write!(f, ",execs:{e}")?;
        }
        for flag in &self.flags {
            write!(f, ",+{flag}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_names_read_back() {
        let prov = Provenance {
            src: Some(11),
            time_ms: 625,
            execs: 93499,
        };
        let exc = EntryName::new(
            4,
            Tag::Exception {
                kind: ExceptionKind::Overflow,
                site: "exprel2.c:27:15".into(),
            },
            prov,
            &["esc"],
        );
        let text = exc.to_string();
        assert_eq!(
            text,
            "id:000004,kind:Overflow,site:exprel2.c:27:15,src:000011,time:625,execs:93499,+esc"
        );
        assert_eq!(EntryName::parse(&text).unwrap(), exc);
        let seed = Provenance {
            src: None,
            time_ms: 0,
            execs: 3,
        };
        let q = EntryName::new(0, Tag::None, seed, &["exc", "errbits"]);
        assert_eq!(q.to_string(), "id:000000,orig:seed,time:0,execs:3,+exc,+errbits");
        assert!(EntryName::parse(&q.to_string()).unwrap().has_flag("errbits"));
        assert_eq!(
            EntryName::new(7, Tag::Crash, prov, &[]).to_string(),
            "id:000007,crash,src:000011,time:625,execs:93499"
        );
        assert_eq!(
            EntryName::new(0, Tag::Hang, prov, &[]).to_string(),
            "id:000000,hang,src:000011,time:625,execs:93499"
        );
        let oom = EntryName::new(3, Tag::OutOfMemory, prov, &[]);
        assert_eq!(oom.to_string(), "id:000003,oom,src:000011,time:625,execs:93499");
        assert_eq!(EntryName::parse(&oom.to_string()).unwrap(), oom);
    }

    #[test]
    fn afl_names_parse() {
        let afl = EntryName::parse("id:000000,sig:11,src:000000,time:1234,execs:77,op:havoc,rep:2").unwrap();
        assert_eq!((afl.id, afl.tag, afl.time_ms), (0, Tag::Signal(11), Some(1234)));
        let q = EntryName::parse("id:000001,orig:zero").unwrap();
        assert_eq!((q.tag, q.time_ms, q.src), (Tag::None, None, None));
        assert!(EntryName::parse("README.txt").is_none());
        assert!(EntryName::parse("id:x,time:1").is_none());
        // A kind without a site is not an exception tag.
        assert_eq!(EntryName::parse("id:000002,kind:Overflow").unwrap().tag, Tag::None);
    }
}
