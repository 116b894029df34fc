//! How ordinary a decoded input is, for choosing the input an entry of the merged report
//! shows (unparsable fields count as edge values).

use crate::report_model::triage::Field;
use crate::triage::inputs::ordinariness::{self, Ordinariness};
use numfuzz_abi::signature::Signature;

pub fn order_of(fields: &[Field]) -> Ordinariness {
    let types: Vec<&str> = fields.iter().map(|f| f.ty.as_str()).collect();
    let encoded = Signature::parse(&types.join(",")).ok().and_then(|sig| {
        let values: Vec<&str> = fields.iter().map(|f| f.value.as_str()).collect();
        sig.encode_text(&values).ok().map(|bytes| (sig, bytes))
    });
    match encoded {
        Some((sig, bytes)) => ordinariness::of(Some(&sig), &bytes),
        None => Ordinariness {
            edge: true,
            magnitude: f64::INFINITY,
        },
    }
}
