//! One module per subcommand.

mod replay;
mod run;
mod sites;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Sites(args) => sites::run(args),
        Command::Replay(args) => replay::run(args),
    }
}
