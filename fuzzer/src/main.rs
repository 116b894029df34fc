//! The `numfuzz` command line: a thin layer over the library and one module per subcommand.

mod cli;
mod commands;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    if let Err(e) = commands::dispatch(cli) {
        eprintln!("numfuzz: error: {e:#}");
        std::process::exit(1);
    }
}
