//! `numfuzz sites TARGET`: the checked operations of a target.

use crate::options::SitesArgs;
use numfuzz::target::Target;

pub fn run(args: SitesArgs) -> anyhow::Result<()> {
    let target = Target::inspect_numfuzz(&args.target)?;
    let table = target.site_table()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&table)?);
        return Ok(());
    }
    let sig = table.signature.as_deref().unwrap_or("(none: fuzzed as plain bytes)");
    println!(
        "{}: {} sites, {} edges, signature {sig}",
        args.target.display(),
        table.sites.len(),
        table.edges
    );
    let width = table.sites.iter().map(|s| s.location().len()).max().unwrap_or(8);
    for s in &table.sites {
        let op = match &s.to {
            Some(to) => format!("{} {} to {to}", s.op, s.ty),
            None => format!("{} {}", s.op, s.ty),
        };
        println!("{:>5}  {:<width$}  {:<18}  {}", s.id, s.location(), op, s.function);
    }
    Ok(())
}
