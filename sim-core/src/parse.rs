//! Exact decimal parsing of quantities with units (`"1.5us"`, `"32MiB"`), shared by [`crate::time`]
//! and [`crate::units`]. No floating point: a value is exact in its base unit or rejected.

/// Why a quantity string was rejected; the message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UnitError(pub String);

/// Parse `"<decimal number><unit>"` against a unit table of `(suffix, scale)` where the scale is
/// the number of base units in one of that unit. Returns the exact value in base units, at
/// most `max` (the quantity's [`Limit`]).
pub(crate) fn parse_quantity(
    input: &str,
    what: &str,
    example: &str,
    units: &[(&str, u128)],
    max: Limit,
) -> Result<u64, UnitError> {
    let s = input.trim();
    let expected = || {
        let names: Vec<&str> = units.iter().map(|u| u.0).filter(|u| !u.is_empty()).collect();
        format!(
            "expected {what} like \"{example}\" (units: {}), got \"{input}\"",
            names.join(", ")
        )
    };
    if s.starts_with('-') {
        return Err(UnitError(format!("{what} must not be negative, got \"{input}\"")));
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    let (number, unit) = (s[..split].replace('_', ""), s[split..].trim());
    if number.is_empty() || number.matches('.').count() > 1 || number == "." {
        return Err(UnitError(expected()));
    }
    let scale = unit_scale(units, unit).ok_or_else(|| UnitError(expected()))?;
    let (int_part, frac_part) = number.split_once('.').unwrap_or((&number, ""));
    if frac_part.len() > 18 {
        return Err(UnitError(format!(
            "{what} \"{input}\" has too many decimal places"
        )));
    }
    let int: u128 = if int_part.is_empty() {
        0
    } else {
        int_part.parse().map_err(|_| UnitError(expected()))?
    };
    let frac: u128 = if frac_part.is_empty() {
        0
    } else {
        frac_part.parse().map_err(|_| UnitError(expected()))?
    };
    let denom = 10u128.pow(frac_part.len() as u32);
    let whole = int.checked_mul(scale).ok_or_else(|| {
        UnitError(format!(
            "{what} \"{input}\" is over the simulator's limit of {}",
            max.text
        ))
    })?;
    let frac_scaled = frac * scale;
    if frac_scaled % denom != 0 {
        return Err(UnitError(format!(
            "{what} \"{input}\" is finer than the simulator's resolution (1 {})",
            units
                .iter()
                .find(|u| u.1 == 1)
                .map(|u| u.0)
                .unwrap_or("base unit")
        )));
    }
    let total = whole + frac_scaled / denom;
    max.check(total, what, input)
}

/// The scale of `unit`: its exact spelling, else any spelling that differs only in case when
/// every such unit means the same (`"25gbps"` is `"25Gbps"`, `"1MS"` is `"1ms"`). The
/// quantities refuse the cases that stay ambiguous first (a size's `b`, a rate's `B`).
fn unit_scale(units: &[(&str, u128)], unit: &str) -> Option<u128> {
    if let Some(u) = units.iter().find(|(name, _)| *name == unit) {
        return Some(u.1);
    }
    let mut alike = units.iter().filter(|(name, _)| name.eq_ignore_ascii_case(unit));
    let first = alike.next()?.1;
    alike.all(|u| u.1 == first).then_some(first)
}

/// The largest value a quantity may take, so that no sum or product the simulator forms
/// from configured values can wrap around its 64-bit integers.
#[derive(Debug, Clone, Copy)]
pub struct Limit {
    /// In base units.
    pub max: u64,
    /// The same, as a user writes it (`"1000000s (about 11.6 days)"`).
    pub text: &'static str,
}

impl Limit {
    /// `value` if within the limit, else an error naming the limit.
    pub fn check(self, value: u128, what: &str, input: &str) -> Result<u64, UnitError> {
        if value > self.max as u128 {
            return Err(UnitError(format!(
                "{what} \"{input}\" is over the simulator's limit of {}",
                self.text
            )));
        }
        Ok(value as u64)
    }
}
