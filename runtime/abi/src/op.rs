//! Operation codes recorded in a site record, and the floating-point types they act on.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Floating-point format of a checked operation's operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum FloatType {
    F32 = 0,
    F64 = 1,
    /// x87 80-bit extended precision (`long double` on x86-64).
    F80 = 2,
}

impl FloatType {
    pub const ALL: [FloatType; 3] = [FloatType::F32, FloatType::F64, FloatType::F80];

    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(FloatType::F32),
            1 => Some(FloatType::F64),
            2 => Some(FloatType::F80),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            FloatType::F32 => "f32",
            FloatType::F64 => "f64",
            FloatType::F80 => "f80",
        }
    }

    /// Suffix of the C library function for this type (`expf`, `exp`, `expl`).
    pub const fn libm_suffix(self) -> &'static str {
        match self {
            FloatType::F32 => "f",
            FloatType::F64 => "",
            FloatType::F80 => "l",
        }
    }
}

impl fmt::Display for FloatType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How an operation's operands are passed to the checker and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpShape {
    /// `a OP b`, printed infix.
    Infix(&'static str),
    /// `fma(a, b, c)`.
    Ternary,
    /// A conversion of `a` to an integer of `aux` bits (site record), result not needed.
    ToInt,
    /// A narrowing conversion of `a` to the type in `aux`; `r` is the narrowed value.
    Narrow,
    /// A libm call of one float argument.
    Unary,
    /// A libm call of two float arguments.
    Binary,
    /// A libm call of a float and an integer (`ldexp(x, n)`): the integer is passed in `i`.
    FloatInt,
}

macro_rules! ops {
    ($( $variant:ident = $code:literal, $name:literal, $shape:expr; )*) => {
        /// A checked operation. Codes are stable: they are stored in every site record.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        #[repr(u16)]
        pub enum Op { $( $variant = $code, )* }

        impl Op {
            pub const ALL: &'static [Op] = &[ $( Op::$variant, )* ];

            pub const fn from_code(code: u16) -> Option<Op> {
                match code { $( $code => Some(Op::$variant), )* _ => None }
            }

            /// The name printed in reports: the IR instruction (`fmul`) or the libm base name
            /// (`exp`, whatever the type suffix).
            pub const fn name(self) -> &'static str {
                match self { $( Op::$variant => $name, )* }
            }

            pub const fn shape(self) -> OpShape {
                match self { $( Op::$variant => $shape, )* }
            }
        }
    };
}

ops! {
    FAdd = 1, "fadd", OpShape::Infix("+");
    FSub = 2, "fsub", OpShape::Infix("-");
    FMul = 3, "fmul", OpShape::Infix("*");
    FDiv = 4, "fdiv", OpShape::Infix("/");
    FRem = 5, "frem", OpShape::Infix("%");
    FMulAdd = 6, "fmuladd", OpShape::Ternary;
    Fma = 7, "fma", OpShape::Ternary;
    FPToSI = 8, "fptosi", OpShape::ToInt;
    FPToUI = 9, "fptoui", OpShape::ToInt;
    FPTrunc = 10, "fptrunc", OpShape::Narrow;
    Sqrt = 32, "sqrt", OpShape::Unary;
    Cbrt = 33, "cbrt", OpShape::Unary;
    Exp = 34, "exp", OpShape::Unary;
    Exp2 = 35, "exp2", OpShape::Unary;
    Expm1 = 36, "expm1", OpShape::Unary;
    Log = 37, "log", OpShape::Unary;
    Log2 = 38, "log2", OpShape::Unary;
    Log10 = 39, "log10", OpShape::Unary;
    Log1p = 40, "log1p", OpShape::Unary;
    Pow = 41, "pow", OpShape::Binary;
    Powi = 42, "powi", OpShape::FloatInt;
    Sin = 43, "sin", OpShape::Unary;
    Cos = 44, "cos", OpShape::Unary;
    Tan = 45, "tan", OpShape::Unary;
    Asin = 46, "asin", OpShape::Unary;
    Acos = 47, "acos", OpShape::Unary;
    Atan = 48, "atan", OpShape::Unary;
    Atan2 = 49, "atan2", OpShape::Binary;
    Sinh = 50, "sinh", OpShape::Unary;
    Cosh = 51, "cosh", OpShape::Unary;
    Tanh = 52, "tanh", OpShape::Unary;
    Asinh = 53, "asinh", OpShape::Unary;
    Acosh = 54, "acosh", OpShape::Unary;
    Atanh = 55, "atanh", OpShape::Unary;
    Hypot = 56, "hypot", OpShape::Binary;
    Fmod = 57, "fmod", OpShape::Binary;
    Remainder = 58, "remainder", OpShape::Binary;
    Lgamma = 59, "lgamma", OpShape::Unary;
    Tgamma = 60, "tgamma", OpShape::Unary;
    Erf = 61, "erf", OpShape::Unary;
    Erfc = 62, "erfc", OpShape::Unary;
    Ldexp = 63, "ldexp", OpShape::FloatInt;
    Scalbn = 64, "scalbn", OpShape::FloatInt;
}

impl Op {
    /// True for calls into the C math library (or their LLVM intrinsics), classified by C11
    /// Annex F rather than by re-executing an instruction.
    pub const fn is_libm(self) -> bool {
        (self as u16) >= 32
    }

    /// Names under which a libm operation is called, for the given type, in C and as LLVM
    /// intrinsics (without the `.f64` style suffix). Arithmetic operations have none.
    pub fn call_names(self, ty: FloatType) -> Vec<String> {
        if !self.is_libm() {
            return Vec::new();
        }
        let base = self.name();
        let mut names = vec![format!("{base}{}", ty.libm_suffix())];
        match self {
            Op::Lgamma => names.push(format!("lgamma{}_r", ty.libm_suffix())),
            Op::Tgamma | Op::Powi => {}
            Op::Scalbn => names.push(format!("scalbln{}", ty.libm_suffix())),
            _ => {}
        }
        if self == Op::Powi {
            names.clear();
        }
        names
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &op in Op::ALL {
            assert!(seen.insert(op as u16), "duplicate code for {op}");
            assert_eq!(Op::from_code(op as u16), Some(op));
        }
        assert_eq!(Op::from_code(0), None);
    }

    #[test]
    fn serde_names_are_report_names() {
        for &op in Op::ALL {
            assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{}\"", op.name()));
        }
        assert_eq!(serde_json::to_string(&FloatType::F80).unwrap(), "\"f80\"");
    }

    #[test]
    fn libm_names_carry_type_suffixes() {
        assert_eq!(Op::Exp.call_names(FloatType::F32), vec!["expf"]);
        assert_eq!(Op::Exp.call_names(FloatType::F80), vec!["expl"]);
        assert_eq!(Op::Lgamma.call_names(FloatType::F64), vec!["lgamma", "lgamma_r"]);
        assert!(Op::FMul.call_names(FloatType::F64).is_empty());
        assert!(Op::Powi.call_names(FloatType::F64).is_empty());
    }
}
