//! Static site records (one per checked operation) and the site table.

use crate::op::{FloatType, Op};
use serde::{Deserialize, Serialize};
use std::ffi::{c_char, CStr};

/// Value of [`SiteRecord::id`] before the runtime numbered the record.
pub const SITE_UNASSIGNED: u32 = u32::MAX;

/// One checked operation, as emitted by the pass into the `__numfuzz_sites` section.
///
/// The pass emits these as writable globals; at start-up every instrumented module's
/// constructor hands its section bounds to the runtime, which numbers the records it has
/// not numbered yet. Objects and static libraries compiled separately thus compose: the
/// numbering is global to the process, like sancov's guards.
#[repr(C)]
#[derive(Debug)]
pub struct SiteRecord {
    /// Global site number, [`SITE_UNASSIGNED`] until the runtime assigns it.
    pub id: u32,
    /// [`Op`] code.
    pub op: u16,
    /// [`FloatType`] code of the operands.
    pub ty: u8,
    /// For `fptosi`/`fptoui`: width of the integer in bits. For `fptrunc`: the destination
    /// [`FloatType`] code. Otherwise 0.
    pub aux: u8,
    pub line: u32,
    pub column: u32,
    /// File name as recorded in the debug info (possibly relative to `directory`).
    pub file: *const c_char,
    /// Compilation directory.
    pub directory: *const c_char,
    /// Demangled name of the enclosing function.
    pub function: *const c_char,
}

/// Size of a [`SiteRecord`]: the pass lays records out back to back with this stride.
pub const SITE_RECORD_SIZE: usize = std::mem::size_of::<SiteRecord>();
const _: () = assert!(SITE_RECORD_SIZE == 40);

/// A site as the fuzzer and the reports see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteInfo {
    pub id: u32,
    pub op: Op,
    #[serde(rename = "type")]
    pub ty: FloatType,
    /// Integer width (conversions to integers) or destination type name (narrowing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    pub file: String,
    pub directory: String,
    pub line: u32,
    pub column: u32,
    pub function: String,
}

impl SiteInfo {
    /// Reads a record the pass emitted.
    ///
    /// # Safety
    /// `rec` must point to a record emitted by the numfuzz pass (valid C strings or null).
    pub unsafe fn from_record(rec: &SiteRecord) -> Option<SiteInfo> {
        let text = |p: *const c_char| {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: the pass emits NUL-terminated constant strings.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let op = Op::from_code(rec.op)?;
        let ty = FloatType::from_code(rec.ty)?;
        let to = match op {
            Op::FPToSI => Some(format!("i{}", rec.aux)),
            Op::FPToUI => Some(format!("u{}", rec.aux)),
            Op::FPTrunc => FloatType::from_code(rec.aux).map(|t| t.name().to_string()),
            _ => None,
        };
        Some(SiteInfo {
            id: rec.id,
            op,
            ty,
            to,
            file: text(rec.file),
            directory: text(rec.directory),
            line: rec.line,
            column: rec.column,
            function: text(rec.function),
        })
    }

    /// `file:line:col`, with the file as the compiler saw it.
    pub fn location(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
    }

    /// The source file's absolute path where the debug info allows it.
    pub fn path(&self) -> std::path::PathBuf {
        let file = std::path::Path::new(&self.file);
        if file.is_absolute() || self.directory.is_empty() {
            file.to_path_buf()
        } else {
            std::path::Path::new(&self.directory).join(file)
        }
    }
}

/// The site table a target writes for `NUMFUZZ_SITES=path`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteTable {
    pub abi_version: u32,
    /// The harness's input signature, if it declared one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Number of sancov edges in the target.
    pub edges: u32,
    pub sites: Vec<SiteInfo>,
    /// The comparisons (for comparison solving).
    #[serde(default)]
    pub cmps: Vec<crate::cmp::CmpInfo>,
}

impl SiteTable {
    pub fn get(&self, id: u32) -> Option<&SiteInfo> {
        self.sites.get(id as usize).filter(|s| s.id == id)
    }
}
