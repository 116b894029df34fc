//! `numfuzz replay TARGET FILE...`: decoded inputs and every exception they raise.

use crate::options::ReplayArgs;
use anyhow::Context;
use numfuzz::replay::{describe, replay};
use numfuzz::target::Target;
use numfuzz_abi::signature::Signature;

pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let target = Target::inspect_numfuzz(&args.target)?;
    let signature = Signature::chosen(args.signature.as_deref(), target.signature.as_ref())?;
    for input in &args.inputs {
        anyhow::ensure!(input.exists(), "input `{}` does not exist", input.display());
        let r = replay(&args.target, input, args.timeout.duration())
            .with_context(|| format!("replaying `{}`", input.display()))?;
        print!("{}", describe(&r, signature.as_ref()));
    }
    Ok(())
}
