//! The `numfuzz` command line: a thin layer over the library and one module per subcommand.

mod commands;
mod options;

use clap::Parser;

fn main() {
    let cli = options::Cli::parse();
    if let Err(e) = commands::dispatch(cli) {
        eprintln!("numfuzz: error: {e:#}");
        std::process::exit(1);
    }
}
