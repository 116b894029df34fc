//! One module per subcommand.

mod cov;
mod harness;
mod replay;
mod run;
mod run_all;
mod sites;
mod triage;

use crate::options::{Cli, Command};

pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Sites(args) => sites::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Cov(args) => cov::run(args),
        Command::Triage(args) => triage::run(args),
        Command::RunAll(args) => run_all::run(args),
        Command::Harness(args) => harness::run(args),
    }
}
