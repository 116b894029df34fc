//! llvm-profdata and llvm-cov of the pinned LLVM: finding them, merging raw profiles,
//! exporting the coverage of a build as JSON.

use super::CovError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The LLVM that numfuzz-cc compiles with (`.cargo/config.toml` pins the same one).
pub const DEFAULT_LLVM_CONFIG: &str = "llvm-config-19";

#[derive(Clone, Debug)]
pub struct LlvmTools {
    pub profdata: PathBuf,
    pub cov: PathBuf,
}

impl LlvmTools {
    /// The tools in `bindir`, or else in `$LLVM_CONFIG --bindir` (default llvm-config-19).
    pub fn locate(bindir: Option<&Path>) -> Result<LlvmTools, CovError> {
        let (dir, origin) = match bindir {
            Some(d) => (d.to_path_buf(), format!("--llvm-bindir {}", d.display())),
            None => {
                let config = std::env::var("LLVM_CONFIG").unwrap_or_else(|_| DEFAULT_LLVM_CONFIG.to_string());
                let out = Command::new(&config)
                    .arg("--bindir")
                    .output()
                    .map_err(|e| CovError::LlvmConfig(config.clone(), e.to_string()))?;
                if !out.status.success() {
                    return Err(CovError::LlvmConfig(
                        config,
                        String::from_utf8_lossy(&out.stderr).trim().to_string(),
                    ));
                }
                let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
                (dir, format!("`{config} --bindir`"))
            }
        };
        let tool = |name: &str| {
            let p = dir.join(name);
            if p.is_file() {
                Ok(p)
            } else {
                Err(CovError::MissingTool(p, origin.clone()))
            }
        };
        Ok(LlvmTools {
            profdata: tool("llvm-profdata")?,
            cov: tool("llvm-cov")?,
        })
    }

    /// `llvm-profdata merge -sparse` of `profiles` into `out`.
    pub fn merge(&self, profiles: &[PathBuf], out: &Path) -> Result<(), CovError> {
        // A file list rather than arguments: a campaign can leave thousands of profiles.
        let list = out.with_extension("inputs");
        let text: String = profiles.iter().map(|p| format!("{}\n", p.display())).collect();
        std::fs::write(&list, text).map_err(|e| CovError::Io(list.clone(), e))?;
        let mut cmd = Command::new(&self.profdata);
        cmd.args(["merge", "-sparse", "-o"])
            .arg(out)
            .arg(format!("--input-files={}", list.display()));
        run_tool(cmd, &self.profdata).map(drop)
    }

    /// `llvm-cov export -format=text` of `binary` under `profdata`, parsed.
    pub fn export(&self, binary: &Path, profdata: &Path) -> Result<serde_json::Value, CovError> {
        let mut cmd = Command::new(&self.cov);
        cmd.args(["export", "-format=text"])
            .arg(binary)
            .arg(format!("-instr-profile={}", profdata.display()));
        let stdout = run_tool(cmd, &self.cov)?;
        serde_json::from_slice(&stdout).map_err(|e| CovError::Export(format!("unreadable JSON: {e}")))
    }
}

fn run_tool(mut cmd: Command, tool: &Path) -> Result<Vec<u8>, CovError> {
    let out = cmd
        .output()
        .map_err(|e| CovError::Tool(tool.to_path_buf(), e.to_string()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message")
            .trim()
            .to_string();
        return Err(CovError::Tool(tool.to_path_buf(), format!("{}: {first}", out.status)));
    }
    Ok(out.stdout)
}
