//! One module per subcommand.

mod replay;
mod sites;

use crate::cli::{Cli, Command};

pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sites(args) => sites::run(args),
        Command::Replay(args) => replay::run(args),
    }
}
